/**
 * What the console knows of each connection strategy the server offers: the options a person fills in, where
 * they sit in `options` (a dotted path), and which are secrets. Secrets are write-only: the API never returns
 * them, the form starts them empty, and an empty secret is not sent, so the stored one is kept.
 */

export type OptionKind = 'text' | 'url' | 'secret' | 'secret-text' | 'number' | 'check' | 'select' | 'textarea' | 'lines';

export interface OptionField {
  path: string;
  label: string;
  kind: OptionKind;
  hint?: string;
  /** Needed to create a connection of this strategy (secrets only on create). */
  required?: boolean;
  choices?: readonly (readonly [string, string])[];
}

export interface StrategyInfo {
  strategy: string;
  label: string;
  family: 'Database' | 'Passwordless' | 'Enterprise' | 'Social';
  fields: OptionField[];
}

const icon: OptionField = { path: 'icon_url', label: 'Button icon URL', kind: 'url', hint: 'Shown on the login button (https).' };
const domains: OptionField = { path: 'domain_aliases', label: 'Email domains', kind: 'lines', hint: 'One a line: people with these email domains are sent here (home realm discovery).' };
const clientId = (required: boolean, hint?: string): OptionField => ({ path: 'client_id', label: 'Client ID', kind: 'text', required, ...(hint && { hint }) });
const clientSecret = (required: boolean): OptionField => ({ path: 'client_secret', label: 'Client secret', kind: 'secret', required });

/** A social preset: the provider's endpoints are built in; without keys, development keys are used where the server has them. */
function social(strategy: string, label: string): StrategyInfo {
  return {
    strategy,
    label,
    family: 'Social',
    fields: [
      clientId(false, `Your ${label} app's client ID.`),
      clientSecret(false),
      { path: 'scope', label: 'Scopes', kind: 'text', hint: 'Space-separated; empty for the preset’s own.' },
    ],
  };
}

export const STRATEGIES: StrategyInfo[] = [
  {
    strategy: 'auth0',
    label: 'Database (email and password)',
    family: 'Database',
    fields: [
      {
        path: 'passwordPolicy',
        label: 'Password strength',
        kind: 'select',
        choices: [
          ['none', 'None: at least 1 character'],
          ['low', 'Low: at least 6 characters'],
          ['fair', 'Fair: 8 characters, lower, upper case and numbers'],
          ['good', 'Good: 8 characters, 3 of lower, upper, numbers, special'],
          ['excellent', 'Excellent: 10 characters, 3 of 4 kinds, no 3 identical in a row'],
        ],
      },
      { path: 'password_complexity_options.min_length', label: 'Minimum length', kind: 'number', hint: 'Overrides the strength’s length (1–128).' },
      { path: 'password_history.enable', label: 'Refuse recently used passwords', kind: 'check' },
      { path: 'password_history.size', label: 'Passwords remembered', kind: 'number', hint: '0–24.' },
      { path: 'password_no_personal_info.enable', label: 'Refuse passwords containing the person’s name or email', kind: 'check' },
      { path: 'password_dictionary.enable', label: 'Refuse common passwords (dictionary)', kind: 'check' },
      { path: 'requires_username', label: 'Require a username', kind: 'check' },
      { path: 'disable_signup', label: 'Disable sign-ups', kind: 'check' },
      { path: 'brute_force_protection', label: 'Brute-force protection', kind: 'check' },
    ],
  },
  {
    strategy: 'email',
    label: 'Passwordless email',
    family: 'Passwordless',
    fields: [
      { path: 'email.from', label: 'From', kind: 'text', hint: 'e.g. Acme <login@acme.example>' },
      { path: 'email.subject', label: 'Subject', kind: 'text' },
      { path: 'email.body', label: 'Body (Liquid)', kind: 'textarea', hint: 'Holds {{ code }} or {{ link }}.' },
      { path: 'totp.length', label: 'Code length', kind: 'number', hint: '4–12 digits.' },
      { path: 'totp.time_step', label: 'Code lifetime (seconds)', kind: 'number' },
      { path: 'disable_signup', label: 'Disable sign-ups', kind: 'check' },
      { path: 'brute_force_protection', label: 'Brute-force protection', kind: 'check' },
    ],
  },
  {
    strategy: 'sms',
    label: 'Passwordless SMS',
    family: 'Passwordless',
    fields: [
      {
        path: 'provider',
        label: 'Provider',
        kind: 'select',
        choices: [
          ['twilio', 'Twilio'],
          ['sms_gateway', 'Your SMS gateway'],
        ],
      },
      { path: 'from', label: 'From number', kind: 'text' },
      { path: 'template', label: 'Message (Liquid)', kind: 'textarea', hint: 'Holds {{ code }}.' },
      { path: 'twilio_sid', label: 'Twilio account SID', kind: 'text' },
      { path: 'twilio_token', label: 'Twilio auth token', kind: 'secret' },
      { path: 'messaging_service_sid', label: 'Twilio messaging service SID', kind: 'text' },
      { path: 'gateway_url', label: 'Gateway URL', kind: 'url' },
      { path: 'totp.length', label: 'Code length', kind: 'number', hint: '4–12 digits.' },
      { path: 'totp.time_step', label: 'Code lifetime (seconds)', kind: 'number' },
      { path: 'disable_signup', label: 'Disable sign-ups', kind: 'check' },
      { path: 'brute_force_protection', label: 'Brute-force protection', kind: 'check' },
    ],
  },
  {
    strategy: 'oidc',
    label: 'OpenID Connect',
    family: 'Enterprise',
    fields: [
      { path: 'discovery_url', label: 'Discovery URL', kind: 'url', hint: 'The issuer’s /.well-known/openid-configuration; or fill the endpoints below.' },
      clientId(true),
      clientSecret(false),
      { path: 'issuer', label: 'Issuer', kind: 'url' },
      { path: 'authorization_endpoint', label: 'Authorization endpoint', kind: 'url' },
      { path: 'token_endpoint', label: 'Token endpoint', kind: 'url' },
      { path: 'userinfo_endpoint', label: 'Userinfo endpoint', kind: 'url' },
      { path: 'jwks_uri', label: 'JWKS URI', kind: 'url' },
      { path: 'scope', label: 'Scopes', kind: 'text', hint: 'Space-separated, e.g. openid profile email.' },
      {
        path: 'type',
        label: 'Flow',
        kind: 'select',
        choices: [
          ['back_channel', 'Back channel (code exchanged with the client secret)'],
          ['front_channel', 'Front channel (id_token through the browser)'],
        ],
      },
      {
        path: 'token_endpoint_auth_method',
        label: 'Token endpoint authentication',
        kind: 'select',
        choices: [
          ['client_secret_post', 'client_secret_post'],
          ['client_secret_basic', 'client_secret_basic'],
          ['private_key_jwt', 'private_key_jwt'],
        ],
      },
      { path: 'token_endpoint_auth_private_key', label: 'Private key (PKCS#8 PEM, for private_key_jwt)', kind: 'secret-text' },
      domains,
      icon,
    ],
  },
  {
    strategy: 'oauth2',
    label: 'OAuth 2.0 (custom)',
    family: 'Enterprise',
    fields: [
      clientId(true),
      clientSecret(true),
      { path: 'authorizationURL', label: 'Authorization URL', kind: 'url', required: true },
      { path: 'tokenURL', label: 'Token URL', kind: 'url', required: true },
      { path: 'userinfoURL', label: 'Userinfo URL', kind: 'url', required: true },
      { path: 'scope', label: 'Scopes', kind: 'text', hint: 'Space-separated.' },
      { path: 'pkce_enabled', label: 'Use PKCE', kind: 'check' },
      icon,
    ],
  },
  {
    strategy: 'samlp',
    label: 'SAML',
    family: 'Enterprise',
    fields: [
      { path: 'signInEndpoint', label: 'Sign-in URL', kind: 'url', required: true },
      { path: 'signOutEndpoint', label: 'Sign-out URL', kind: 'url' },
      { path: 'signingCert', label: 'Signing certificate (PEM)', kind: 'textarea', hint: 'The identity provider’s certificate; on an existing connection, empty keeps the current one.' },
      { path: 'signSAMLRequest', label: 'Sign the SAML requests', kind: 'check' },
      {
        path: 'signatureAlgorithm',
        label: 'Signature algorithm',
        kind: 'select',
        choices: [
          ['rsa-sha256', 'RSA-SHA256'],
          ['rsa-sha1', 'RSA-SHA1'],
        ],
      },
      {
        path: 'protocolBinding',
        label: 'Request binding',
        kind: 'select',
        choices: [
          ['urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', 'HTTP-Redirect'],
          ['urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', 'HTTP-POST'],
        ],
      },
      { path: 'user_id_attribute', label: 'User ID attribute', kind: 'text' },
      domains,
      icon,
    ],
  },
  social('google-oauth2', 'Google'),
  social('github', 'GitHub'),
  social('windowslive', 'Microsoft Account'),
  social('facebook', 'Facebook'),
  social('linkedin', 'LinkedIn'),
];

export function strategyInfo(strategy: string): StrategyInfo | undefined {
  return STRATEGIES.find((s) => s.strategy === strategy);
}

export function getPath(options: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((at, key) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined), options);
}

/** A copy of `options` with `path` set (objects on the way created or copied), or deleted when `value` is undefined. */
export function setPath(options: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const [key = '', ...rest] = path.split('.');
  const copy = { ...options };
  if (rest.length === 0) {
    if (value === undefined) delete copy[key];
    else copy[key] = value;
    return copy;
  }
  const inner = copy[key] && typeof copy[key] === 'object' ? (copy[key] as Record<string, unknown>) : {};
  copy[key] = setPath(inner, rest.join('.'), value);
  return copy;
}

/** The form's text for an option as the API returned it (secrets always empty). */
export function formValue(field: OptionField, options: Record<string, unknown>): string | boolean {
  const value = getPath(options, field.path);
  if (field.kind === 'check') return value === true;
  if (field.kind === 'secret' || field.kind === 'secret-text') return '';
  if (field.kind === 'lines') return Array.isArray(value) ? value.join('\n') : '';
  if (Array.isArray(value)) return value.join(' ');
  return value === undefined || value === null ? '' : String(value);
}

/**
 * `options` to send: what the API returned (so options the console does not show are kept, since PATCH
 * replaces them whole) with the form's values laid over. Empty text clears an option; an empty secret is left
 * out, so the stored one is kept.
 */
export function optionsToSend(fields: OptionField[], base: Record<string, unknown>, values: Record<string, string | boolean>): Record<string, unknown> {
  let options = base;
  for (const field of fields) {
    const value = values[field.path];
    if (field.kind === 'check') {
      options = setPath(options, field.path, value === true);
      continue;
    }
    const text = typeof value === 'string' ? value.trim() : '';
    if (field.kind === 'secret' || field.kind === 'secret-text') {
      if (text) options = setPath(options, field.path, field.kind === 'secret-text' ? String(value) : text);
      continue;
    }
    if (field.path === 'signingCert' && !text) {
      options = setPath(options, field.path, undefined);
      continue;
    }
    if (!text) options = setPath(options, field.path, undefined);
    else if (field.kind === 'number') options = setPath(options, field.path, Number(text));
    else if (field.kind === 'lines') options = setPath(options, field.path, text.split('\n').map((l) => l.trim()).filter(Boolean));
    else options = setPath(options, field.path, field.kind === 'textarea' ? String(value) : text);
  }
  return options;
}

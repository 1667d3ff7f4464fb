/**
 * /api/v2/clients (B.7): the applications of a tenant.
 *
 *  - Fields with behaviour here: the URL lists (validated; origins normalised to what a browser sends in
 *    `Origin`), grant types, how the client authenticates (`token_endpoint_auth_method` or exactly one of
 *    `client_authentication_methods`, whose keys and certificates are checked on the way in) and its secret.
 *  - Every other documented field is validated for shape, stored and echoed as sent; anything undocumented is
 *    a 400, as the reference's create schema allows no other properties.
 *  - Secrets are sealed at rest. A response carries `client_secret` (and the registered credentials) only for a
 *    token holding a client_keys scope, except the create response, which is the one chance to read it.
 *  - Every change invalidates the tenant's CORS origin cache (tenancy/client-origins.ts).
 */
import { LOGOUT_INITIATORS, NOT_RAISED } from '../auth-api/backchannel-logout/settings.js';
import { createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { Type, type Static, type TSchema } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { registeredMethod } from '../auth-api/client-auth/index.js';
import { InvalidSamlpAddon, validateSamlpAddon } from '../auth-api/samlp/addon.js';
import { InvalidFirebaseAddon, storedFirebaseAddon, withoutFirebaseKey } from '../auth-api/firebase/addon.js';
import { newId, randomAlphanumeric } from '../crypto/ids.js';
import { InvalidInput, NotFound, ProtocolError } from '../http/errors.js';
import { errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { listClientGrants } from '../store/client-grants.js';
import { ConcurrentChange, concurrentChangeConflict, retryOnConcurrentChange } from '../store/concurrent-change.js';
import {
  deleteClient,
  findClient,
  insertClient,
  listClients,
  replaceClientAsRead,
  replaceClientSecret,
  type AppType,
  type Client,
  type ClientAuthenticationMethods,
  type ClientProperties,
  type NewClient,
  type PrivateKeyJwtCredential,
  type SelfSignedTlsCredential,
  type TlsClientAuthCredential,
  type TokenEndpointAuthMethod,
} from '../store/clients.js';
import { clientSecretContext } from '../tenancy/bootstrap.js';
import { InsufficientScope } from './authenticate.js';
import { isGlobalClientId, presentGlobalClient } from './global-client.js';
import { operation } from './operation.js';
import { pagedList, paginate, pagingFields } from './pagination.js';

// ---------------------------------------------------------------------------------------------------------
// Errors

export class ClientNotFound extends NotFound {
  constructor() {
    super('The client does not exist', 'inexistent_client');
  }
}

export class OperationNotSupported extends ProtocolError {
  constructor(description: string) {
    super(403, 'operation_not_supported', description);
  }
}

const invalidBody = (message: string) => new InvalidInput('body', message);

// ---------------------------------------------------------------------------------------------------------
// Schemas

/**
 * `schema` or null. A list of types rather than anyOf: with type coercion on (app.ts), an anyOf branch would
 * turn null into "" or false before the null branch is tried.
 */
function orNull<T extends TSchema>(schema: T) {
  const { type, ...rest } = schema as unknown as { type: string } & Record<string, unknown>;
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
}

function oneOf<const V extends string>(values: readonly V[]) {
  return Type.Unsafe<V>({ type: 'string', enum: [...values] });
}

function oneOfOrNull<const V extends string>(values: readonly V[]) {
  return Type.Unsafe<V | null>({ type: ['string', 'null'], enum: [...values, null] });
}

export const APP_TYPES = ['native', 'spa', 'regular_web', 'non_interactive'] as const;
/** Every app_type the reference names, for the list filter (SSO integrations never match here). */
const KNOWN_APP_TYPES = new Set<string>([
  ...APP_TYPES,
  'resource_server',
  'express_configuration',
  'rms',
  'box',
  'cloudbees',
  'concur',
  'dropbox',
  'mscrm',
  'echosign',
  'egnyte',
  'newrelic',
  'office365',
  'salesforce',
  'sentry',
  'sharepoint',
  'slack',
  'springcm',
  'zendesk',
  'zoom',
  'sso_integration',
  'oag',
]);
const PUBLIC_APP_TYPES = new Set<AppType>(['spa', 'native']);

const DEFAULT_GRANT_TYPES: Record<AppType, readonly string[]> = {
  spa: ['authorization_code', 'implicit', 'refresh_token'],
  native: ['authorization_code', 'implicit', 'refresh_token'],
  regular_web: ['authorization_code', 'implicit', 'refresh_token', 'client_credentials'],
  non_interactive: ['client_credentials'],
};

/** The grant types the reference names (B.7, C.3). Anything else is a typo, refused rather than kept. */
const GRANT_TYPES = new Set([
  'authorization_code',
  'implicit',
  'refresh_token',
  'client_credentials',
  'password',
  'http://auth0.com/oauth/grant-type/password-realm',
  'http://auth0.com/oauth/grant-type/passwordless/otp',
  'http://auth0.com/oauth/grant-type/mfa-otp',
  'http://auth0.com/oauth/grant-type/mfa-oob',
  'http://auth0.com/oauth/grant-type/mfa-recovery-code',
  'urn:ietf:params:oauth:grant-type:device_code',
  'urn:ietf:params:oauth:grant-type:token-exchange',
  'urn:openid:params:grant-type:ciba',
  'urn:auth0:params:oauth:grant-type:token-exchange:federated-connection-access-token',
  // The reference's legacy grants that POST /delegation checks (auth-api/delegation.ts), one per token it takes.
  'http://auth0.com/oauth/legacy/grant-type/delegation/id_token',
  'http://auth0.com/oauth/legacy/grant-type/delegation/refresh_token',
]);

const Url = Type.String({ minLength: 1, maxLength: 2048 });
const UrlList = Type.Array(Url, { maxItems: 200 });
const NameList = Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 200 });
const LongText = Type.String({ maxLength: 100_000 });
const OpaqueObject = Type.Object({}, { additionalProperties: true });
/** OIDC Back-Channel Logout (auth-api/backchannel-logout/settings.ts), in the reference's shape; one URL, as the reference allows. */
const OidcLogout = Type.Object(
  {
    backchannel_logout_urls: Type.Optional(
      Type.Array(Type.String({ maxLength: 2048, pattern: '^https?://[^\\s]+$', description: 'Where logout tokens are POSTed (https; plain http only to loopback or private addresses with allow_insecure_webhooks)' }), { maxItems: 1 }),
    ),
    backchannel_logout_initiators: Type.Optional(
      Type.Object(
        {
          mode: Type.Union([Type.Literal('custom'), Type.Literal('all')]),
          selected_initiators: Type.Optional(Type.Array(Type.Union(LOGOUT_INITIATORS.map((i) => Type.Literal(i))), { maxItems: LOGOUT_INITIATORS.length })),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);
const CredentialName = Type.String({ minLength: 1, maxLength: 128 });
const Pem = Type.String({ minLength: 1, maxLength: 16_384 });
const CREDENTIAL_ID = /^cred_[A-Za-z0-9]{16}$/;

/** A credential registered earlier, kept by naming its id (as the reference's PATCH does). */
const CredentialRef = Type.Object({ id: Type.String({ pattern: CREDENTIAL_ID.source }) }, { additionalProperties: false });
const PublicKeyCredential = Type.Object(
  {
    credential_type: Type.Literal('public_key'),
    name: Type.Optional(CredentialName),
    pem: Pem,
    alg: Type.Optional(oneOf(['RS256', 'RS384', 'PS256', 'ES256'])),
    parse_expiry_from_cert: Type.Optional(Type.Boolean()),
    expires_at: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
const SubjectDnCredential = Type.Object(
  { credential_type: Type.Literal('cert_subject_dn'), name: Type.Optional(CredentialName), subject_dn: Type.String({ minLength: 3, maxLength: 1024 }) },
  { additionalProperties: false },
);
const X509Credential = Type.Object(
  { credential_type: Type.Literal('x509_cert'), name: Type.Optional(CredentialName), pem: Pem },
  { additionalProperties: false },
);
const credentialsOf = <T extends TSchema>(credential: T) =>
  Type.Object(
    { credentials: Type.Array(Type.Union([CredentialRef, credential]), { minItems: 1, maxItems: 10 }) },
    { additionalProperties: false },
  );
const AuthenticationMethods = Type.Object(
  {
    private_key_jwt: Type.Optional(credentialsOf(PublicKeyCredential)),
    tls_client_auth: Type.Optional(credentialsOf(SubjectDnCredential)),
    self_signed_tls_client_auth: Type.Optional(credentialsOf(X509Credential)),
  },
  { additionalProperties: false, minProperties: 1, maxProperties: 1 },
);
type AuthenticationMethodsInput = Static<typeof AuthenticationMethods>;

const RefreshToken = Type.Object(
  {
    rotation_type: oneOf(['rotating', 'non-rotating']),
    expiration_type: oneOf(['expiring', 'non-expiring']),
    leeway: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_592_000 })),
    token_lifetime: Type.Optional(Type.Integer({ minimum: 1, maximum: 157_788_000 })),
    infinite_token_lifetime: Type.Optional(Type.Boolean()),
    idle_token_lifetime: Type.Optional(Type.Integer({ minimum: 1, maximum: 157_788_000 })),
    infinite_idle_token_lifetime: Type.Optional(Type.Boolean()),
    policies: Type.Optional(
      orNull(
        Type.Array(
          Type.Object(
            {
              audience: Type.String({ minLength: 1, maxLength: 600 }),
              scope: Type.Array(Type.String({ minLength: 1, maxLength: 280 }), { maxItems: 1000 }),
            },
            { additionalProperties: false },
          ),
          { minItems: 1, maxItems: 100 },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);

const JwtConfiguration = Type.Object(
  {
    lifetime_in_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_592_000 })),
    secret_encoded: Type.Optional(Type.Boolean()),
    scopes: Type.Optional(OpaqueObject),
    // Checked in the handler, so that HS256 gets an answer that says why.
    alg: Type.Optional(Type.String({ minLength: 1, maxLength: 16 })),
  },
  { additionalProperties: false },
);

/**
 * Every documented field a caller may write (B.7 and the reference's create/update schemas), with its
 * shape. Nullable ones may be sent as null in a PATCH to unset them (on create, null is the same as absent).
 */
const Fields = {
  name: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^<>]+$' }),
  description: Type.String({ maxLength: 140 }),
  logo_uri: Type.String({ maxLength: 2048 }),
  client_secret: Type.String({ minLength: 32, maxLength: 1000 }),
  app_type: oneOf(APP_TYPES),
  is_first_party: Type.Boolean(),
  oidc_conformant: Type.Boolean(),
  callbacks: UrlList,
  allowed_logout_urls: UrlList,
  web_origins: UrlList,
  allowed_origins: UrlList,
  client_aliases: NameList,
  allowed_clients: NameList,
  grant_types: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 20 }),
  token_endpoint_auth_method: oneOfOrNull(['none', 'client_secret_post', 'client_secret_basic']),
  client_authentication_methods: orNull(AuthenticationMethods),
  is_token_endpoint_ip_header_trusted: Type.Boolean(),
  jwt_configuration: JwtConfiguration,
  refresh_token: orNull(RefreshToken),
  encryption_key: orNull(
    Type.Object(
      { pub: Type.Optional(Type.String({ maxLength: 16_384 })), cert: Type.Optional(Type.String({ maxLength: 16_384 })), subject: Type.Optional(Type.String({ maxLength: 1024 })) },
      { additionalProperties: false },
    ),
  ),
  sso: Type.Boolean(),
  sso_disabled: Type.Boolean(),
  cross_origin_authentication: Type.Boolean(),
  cross_origin_loc: orNull(Type.String({ maxLength: 2048 })),
  custom_login_page_on: Type.Boolean(),
  custom_login_page: LongText,
  custom_login_page_preview: LongText,
  form_template: LongText,
  addons: Type.Record(Type.String({ maxLength: 64 }), OpaqueObject, {
    maxProperties: 50,
    description: 'samlp: Gatehouse as the SAML identity provider of this application; firebase: the service account (client_email, private_key, private_key_id, lifetime_in_seconds ≤ 3600) that signs Firebase custom tokens at POST /delegation; its private_key is write-only. Others are stored as sent.',
  }),
  client_metadata: Type.Record(Type.String(), Type.String({ maxLength: 255 }), { maxProperties: 10 }),
  mobile: OpaqueObject,
  initiate_login_uri: Type.String({ maxLength: 2048 }),
  native_social_login: OpaqueObject,
  oidc_logout: OidcLogout,
  oidc_backchannel_logout: OpaqueObject,
  session_transfer: orNull(OpaqueObject),
  default_organization: orNull(OpaqueObject),
  organization_usage: oneOfOrNull(['deny', 'allow', 'require']),
  organization_require_behavior: oneOfOrNull(['no_prompt', 'pre_login_prompt', 'post_login_prompt']),
  organization_discovery_methods: orNull(Type.Array(oneOf(['email', 'organization_name']), { minItems: 1, maxItems: 2 })),
  require_pushed_authorization_requests: Type.Boolean(),
  require_proof_of_possession: Type.Boolean(),
  tls_client_certificate_bound_access_tokens: Type.Boolean({
    description: 'RFC 8705 §3.4: bind access tokens to the client certificate of the token request (behind a trusted mTLS edge); a token request without one is refused',
  }),
  signed_request_object: Type.Object(
    {
      required: Type.Optional(Type.Boolean({ description: 'Take only signed request objects (RFC 9101) at /authorize and /oauth/par' })),
      credentials: Type.Optional(Type.Array(CredentialRef, { maxItems: 10, description: 'private_key_jwt credentials that may sign them (all when absent)' })),
    },
    { additionalProperties: false },
  ),
  compliance_level: oneOfOrNull(['none', 'fapi1_adv_pkj_par', 'fapi1_adv_mtls_par', 'fapi2_sp_pkj_mtls', 'fapi2_sp_mtls_mtls', 'fapi2_sp_pkj_dpop']),
  skip_non_verifiable_callback_uri_confirmation_prompt: orNull(Type.Boolean()),
  token_exchange: orNull(OpaqueObject),
  par_request_expiry: orNull(Type.Integer({ minimum: 10, maximum: 600 })),
  token_quota: orNull(OpaqueObject),
  express_configuration: orNull(OpaqueObject),
  my_organization_configuration: OpaqueObject,
  third_party_security_mode: oneOf(['strict', 'permissive']),
  redirection_policy: oneOf(['allow_always', 'open_redirect_protection']),
  async_approval_notification_channels: Type.Array(oneOf(['guardian-push', 'email']), { minItems: 1, maxItems: 2 }),
  resource_server_identifier: Type.String({ minLength: 1, maxLength: 600 }),
};

const OptionalFields = Type.Partial(Type.Object(Fields));
const CreateBody = Type.Object({ ...OptionalFields.properties, name: Fields.name }, { additionalProperties: false });
type CreateInput = Static<typeof CreateBody>;
/** `resource_server_identifier` links a client to an API once, at creation. */
const { resource_server_identifier: _fixed, ...updatable } = OptionalFields.properties;
const UpdateBody = Type.Object(updatable, { additionalProperties: false, minProperties: 1 });
type UpdateInput = Static<typeof UpdateBody>;

/** Names a response may carry, for `fields`. */
const RESPONSE_FIELDS = new Set<string>(['client_id', 'tenant', 'global', 'signing_keys', ...Object.keys(Fields)]);

const FieldsQuery = {
  fields: Type.Optional(Type.String({ maxLength: 4000 })),
  include_fields: Type.Optional(Type.Boolean()),
};

const ListQuery = Type.Object(
  {
    ...pagingFields,
    ...FieldsQuery,
    app_type: Type.Optional(Type.String({ maxLength: 1000 })),
    is_first_party: Type.Optional(Type.Boolean()),
    is_global: Type.Optional(Type.Boolean()),
    q: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);

/** Generated ids are 32 alphanumerics; an admin client id from the environment may also hold `-` and `_`. */
export const ClientIdString = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });
const IdParams = Type.Object({ id: ClientIdString });

const ClientBody = Type.Object(
  {
    client_id: Type.Optional(Type.String()),
    tenant: Type.Optional(Type.String()),
    global: Type.Optional(Type.Boolean()),
    name: Type.Optional(Type.String()),
    app_type: Type.Optional(Type.String()),
    client_secret: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

// ---------------------------------------------------------------------------------------------------------
// Field checks

function describe(value: string): string {
  return JSON.stringify(value.length > 120 ? `${value.slice(0, 120)}…` : value);
}

function parseUrl(field: string, value: string): URL {
  if (value.includes('*')) throw invalidBody(`${field}: ${describe(value)}: wildcards are not supported; URLs are matched exactly`);
  try {
    return new URL(value);
  } catch {
    throw invalidBody(`${field}: ${describe(value)} is not an absolute URL`);
  }
}

function isHttp(url: URL): boolean {
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
}

/** Schemes that run or read something rather than name a place; never a redirect target. */
const DANGEROUS_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:', 'filesystem:']);

/**
 * Redirect targets (callbacks, logout URLs): absolute http(s) URLs without credentials. A native app may also
 * use its own private-use scheme (RFC 8252 §7.1, e.g. `com.example.app:/callback`). Callbacks may not carry a
 * fragment (RFC 6749 §3.1.2).
 */
function checkRedirectUrls(field: string, values: readonly string[], appType: AppType): void {
  for (const value of values) {
    const url = parseUrl(field, value);
    const customScheme = appType === 'native' && !DANGEROUS_SCHEMES.has(url.protocol) && url.protocol !== 'http:' && url.protocol !== 'https:';
    if (!isHttp(url) && !customScheme) {
      throw invalidBody(
        `${field}: ${describe(value)} must be an http or https URL${appType === 'native' ? ' or use the app\'s own scheme' : ''}`,
      );
    }
    if (url.username || url.password) throw invalidBody(`${field}: ${describe(value)} must not contain credentials`);
    if (field === 'callbacks' && value.includes('#')) throw invalidBody(`${field}: ${describe(value)} must not contain a fragment`);
  }
}

/** Origins are `scheme://host[:port]`; stored as a browser sends them in `Origin` (lower case, no default port). */
function normalizeOrigins(field: string, values: readonly string[]): string[] {
  return values.map((value) => {
    const url = parseUrl(field, value);
    if (!isHttp(url) || url.username || url.password || url.pathname !== '/' || /[?#]/.test(value) || /^[a-z]+:\/\/[^/]+\/./i.test(value)) {
      throw invalidBody(`${field}: ${describe(value)} must be an origin: http(s)://host[:port], without path, query or fragment`);
    }
    return url.origin;
  });
}

function checkHttpUrl(field: string, value: string, { https = false } = {}): void {
  const url = parseUrl(field, value);
  if (!isHttp(url) || (https && url.protocol !== 'https:')) throw invalidBody(`${field}: ${describe(value)} must be an ${https ? 'https' : 'http or https'} URL`);
}

/** `initiate_login_uri`: https, and may carry `{placeholders}` (organization_name, connection_name, …). */
function checkInitiateLoginUri(value: string): void {
  if (value === '') return;
  const filled = value.replace(/\{[a-z_]{1,64}\}/g, 'x');
  if (filled.includes('*')) throw invalidBody(`initiate_login_uri: ${describe(value)}: wildcards are not supported`);
  checkHttpUrl('initiate_login_uri', filled, { https: true });
}

const METADATA_KEY = /^[A-Za-z0-9:,\-+=_*?"/\\()<>@\t ]{1,255}$/;

function checkFields(input: CreateInput | UpdateInput, client: NewClient): void {
  if (input.callbacks !== undefined || input.app_type !== undefined) checkRedirectUrls('callbacks', client.callbacks, client.app_type);
  if (input.allowed_logout_urls !== undefined || input.app_type !== undefined) {
    checkRedirectUrls('allowed_logout_urls', client.allowed_logout_urls, client.app_type);
  }
  if (typeof input.cross_origin_loc === 'string') checkHttpUrl('cross_origin_loc', input.cross_origin_loc);
  if (input.logo_uri) checkHttpUrl('logo_uri', input.logo_uri);
  if (input.initiate_login_uri !== undefined) checkInitiateLoginUri(input.initiate_login_uri);
  if (input.addons?.samlp !== undefined) {
    try {
      validateSamlpAddon(input.addons.samlp);
    } catch (error) {
      if (error instanceof InvalidSamlpAddon) throw invalidBody(error.message);
      throw error;
    }
  }
  for (const initiator of input.oidc_logout?.backchannel_logout_initiators?.selected_initiators ?? []) {
    const why = NOT_RAISED[initiator];
    if (why) throw invalidBody(`oidc_logout.backchannel_logout_initiators.selected_initiators: ${initiator} is not offered (${why}); choose among the others or mode "all"`);
  }
  for (const grantType of input.grant_types ?? []) {
    if (!GRANT_TYPES.has(grantType)) throw invalidBody(`grant_types: ${describe(grantType)} is not a grant type this server knows`);
  }
  // Tokens here are signed with the tenant's RSA keys only (design.md "Tokens"): an HS256 setting would make
  // applications verify ID tokens with the client secret, which we never sign with, so it is refused, not stored.
  const alg = input.jwt_configuration?.alg;
  if (alg !== undefined && alg !== 'RS256') {
    throw invalidBody(`jwt_configuration.alg: ${describe(alg)} is not supported; tokens are signed with RS256 only (HS256 is never issued)`);
  }
  for (const key of Object.keys(input.client_metadata ?? {})) {
    if (!METADATA_KEY.test(key)) throw invalidBody(`client_metadata: key ${describe(key)} has characters outside letters, digits and :,-+=_*?"/\\()<>@ space tab`);
  }
  if (!client.is_first_party && (client.organization_usage !== undefined || client.organization_require_behavior !== undefined)) {
    throw new OperationNotSupported(
      'Organizations are only available to first party clients on user-based flows. Properties organization_usage and organization_require_behavior must be unset for third party clients.',
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// Credentials (client_authentication_methods)

const newCredentialId = () => `cred_${randomAlphanumeric(16)}`;
const MIN_RSA_BITS = 2048;

function checkRsaSize(field: string, key: KeyObject): void {
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS) throw invalidBody(`${field}: the RSA key has ${bits} bits; at least ${MIN_RSA_BITS} are required`);
}

function parsePem(field: string, pem: string): { key: KeyObject; cert?: X509Certificate } {
  if (/PRIVATE KEY/.test(pem)) throw invalidBody(`${field}: the pem holds a private key; register the public key or certificate only`);
  if (!/-----BEGIN [A-Z0-9 ]+-----/.test(pem)) throw invalidBody(`${field}: pem must be a PEM-encoded public key or X.509 certificate`);
  try {
    if (pem.includes('BEGIN CERTIFICATE')) {
      const cert = new X509Certificate(pem);
      return { key: cert.publicKey, cert };
    }
    return { key: createPublicKey({ key: pem, format: 'pem' }) };
  } catch {
    throw invalidBody(`${field}: pem is not a valid public key or certificate`);
  }
}

function publicKeyCredential(input: Static<typeof PublicKeyCredential>, now: string): PrivateKeyJwtCredential {
  const field = 'client_authentication_methods.private_key_jwt';
  const { key, cert } = parsePem(field, input.pem);
  if (input.alg === 'ES256') {
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw invalidBody(`${field}: ES256 needs an EC P-256 key`);
  } else {
    if (key.asymmetricKeyType !== 'rsa') {
      throw invalidBody(`${field}: the key must be an RSA key (RS256, RS384 and PS256 are RSA algorithms; ES256 takes EC P-256), not ${key.asymmetricKeyType ?? 'unknown'}`);
    }
    checkRsaSize(field, key);
  }
  let expiresAt = input.expires_at;
  if (expiresAt !== undefined && Number.isNaN(Date.parse(expiresAt))) throw invalidBody(`${field}: expires_at must be an ISO 8601 date-time`);
  if (input.parse_expiry_from_cert) {
    const validTo = cert ? Date.parse(cert.validTo) : Number.NaN;
    if (Number.isNaN(validTo)) throw invalidBody(`${field}: parse_expiry_from_cert needs an X.509 certificate with an expiry in pem`);
    expiresAt = new Date(validTo).toISOString();
  }
  return {
    id: newCredentialId(),
    credential_type: 'public_key',
    ...(input.name !== undefined && { name: input.name }),
    pem: input.pem,
    alg: input.alg ?? 'RS256',
    ...(input.parse_expiry_from_cert !== undefined && { parse_expiry_from_cert: input.parse_expiry_from_cert }),
    ...(expiresAt !== undefined && { expires_at: new Date(Date.parse(expiresAt)).toISOString() }),
    created_at: now,
  };
}

/** A DN is `type=value` pairs separated by commas or newlines, as tls-client-auth.ts compares them. */
function subjectDnCredential(input: Static<typeof SubjectDnCredential>, now: string): TlsClientAuthCredential {
  const parts = input.subject_dn.split(/\n|,(?=\s*[A-Za-z][\w.-]*\s*=)/).map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !/^[A-Za-z][\w.-]*\s*=\s*\S/.test(p))) {
    throw invalidBody('client_authentication_methods.tls_client_auth: subject_dn must be a distinguished name such as "CN=client, O=Example, C=US"');
  }
  return { id: newCredentialId(), credential_type: 'cert_subject_dn', ...(input.name !== undefined && { name: input.name }), subject_dn: input.subject_dn, created_at: now };
}

function x509Credential(input: Static<typeof X509Credential>, now: string): SelfSignedTlsCredential {
  const field = 'client_authentication_methods.self_signed_tls_client_auth';
  if (!input.pem.includes('BEGIN CERTIFICATE')) throw invalidBody(`${field}: pem must be an X.509 certificate`);
  const { key, cert } = parsePem(field, input.pem);
  if (Date.parse(cert!.validTo) < Date.now()) throw invalidBody(`${field}: the certificate expired on ${cert!.validTo}`);
  if (key.asymmetricKeyType === 'rsa') checkRsaSize(field, key);
  return { id: newCredentialId(), credential_type: 'x509_cert', ...(input.name !== undefined && { name: input.name }), pem: input.pem, created_at: now };
}

/** New credentials get ids; `{ id }` keeps one already registered for the same method of this client. */
function buildCredentials<In extends { id: string } | object, Out extends { id: string }>(
  method: string,
  inputs: readonly In[],
  existing: readonly Out[] | undefined,
  build: (input: Exclude<In, { id: string }>) => Out,
): Out[] {
  const out = inputs.map((input) => {
    if (!('id' in input)) return build(input as Exclude<In, { id: string }>);
    const kept = existing?.find((c) => c.id === input.id);
    if (!kept) throw invalidBody(`client_authentication_methods.${method}: credential ${input.id} is not registered for this client and method`);
    return kept;
  });
  if (new Set(out.map((c) => c.id)).size !== out.length) throw invalidBody(`client_authentication_methods.${method}: a credential is listed twice`);
  return out;
}

function buildAuthenticationMethods(input: AuthenticationMethodsInput, existing: ClientAuthenticationMethods | undefined): ClientAuthenticationMethods {
  const now = new Date().toISOString();
  if (input.private_key_jwt) {
    return {
      private_key_jwt: {
        credentials: buildCredentials('private_key_jwt', input.private_key_jwt.credentials, existing?.private_key_jwt?.credentials, (c) =>
          publicKeyCredential(c, now),
        ),
      },
    };
  }
  if (input.tls_client_auth) {
    return {
      tls_client_auth: {
        credentials: buildCredentials('tls_client_auth', input.tls_client_auth.credentials, existing?.tls_client_auth?.credentials, (c) =>
          subjectDnCredential(c, now),
        ),
      },
    };
  }
  return {
    self_signed_tls_client_auth: {
      credentials: buildCredentials(
        'self_signed_tls_client_auth',
        input.self_signed_tls_client_auth!.credentials,
        existing?.self_signed_tls_client_auth?.credentials,
        (c) => x509Credential(c, now),
      ),
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Presentation

interface View {
  /** Whether the caller may see keys: `client_secret`, `client_authentication_methods`, `encryption_key`. */
  keys: boolean;
  /** The secret in clear, when `keys`. */
  secret?: string | undefined;
}

function present(client: Client | NewClient, tenantName: string, view: View): Record<string, unknown> {
  const {
    tenant_id: _tenant,
    client_id,
    name,
    client_secret_sealed: _sealed,
    is_system: _system,
    is_default_app: _defaultApp,
    is_console: _console,
    client_authentication_methods,
    encryption_key,
    token_endpoint_auth_method,
    jwt_configuration,
    addons,
    ...fields
  } = client;
  const { created_at: _created, updated_at: _updated, ...documented } = fields as typeof fields & { created_at?: number; updated_at?: number };
  return {
    client_id,
    tenant: tenantName,
    global: false,
    name,
    ...documented,
    // The Firebase add-on's private key is write-only (auth-api/firebase/addon.ts).
    ...(addons !== undefined && { addons: withoutFirebaseKey(addons) }),
    // With client_authentication_methods the endpoint method does not apply; the reference pairs them with null.
    token_endpoint_auth_method: client_authentication_methods ? null : token_endpoint_auth_method,
    jwt_configuration: { ...jwt_configuration, alg: 'RS256' },
    ...(view.keys && client_authentication_methods && { client_authentication_methods }),
    ...(view.keys && encryption_key !== undefined && { encryption_key }),
    ...(view.keys && view.secret !== undefined && { client_secret: view.secret }),
  };
}

function parseFields(fields: string | undefined): string[] | undefined {
  if (fields === undefined || fields === '') return undefined;
  const names = fields.split(',').map((f) => f.trim());
  for (const name of names) {
    const [head, sub, more] = name.split('.');
    if (!head || !RESPONSE_FIELDS.has(head) || sub === '' || more !== undefined) {
      throw new InvalidInput('querystring', `fields: ${describe(name)} is not a client field`);
    }
  }
  return names;
}

/** `fields` with `include_fields` (default true) keeps or drops the named fields; `a.b` names a member of `a`. */
function selectFields(body: Record<string, unknown>, names: string[] | undefined, include: boolean): Record<string, unknown> {
  if (!names) return body;
  const whole = names.filter((n) => !n.includes('.'));
  const members = names.filter((n) => n.includes('.')).map((n) => n.split('.') as [string, string]);
  if (include) {
    const out: Record<string, unknown> = {};
    for (const name of whole) if (name in body) out[name] = body[name];
    for (const [head, sub] of members) {
      const value = body[head];
      if (whole.includes(head) || !value || typeof value !== 'object' || !(sub in value)) continue;
      out[head] = { ...(out[head] as object | undefined), [sub]: (value as Record<string, unknown>)[sub] };
    }
    return out;
  }
  const out = { ...body };
  for (const name of whole) delete out[name];
  for (const [head, sub] of members) {
    const value = out[head];
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const { [sub]: _dropped, ...rest } = value as Record<string, unknown>;
      out[head] = rest;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Routes

/** Names properties outside the documented ones, which the schema alone reports without naming them. */
function refuseUnknownProperties(known: Record<string, unknown>, fixed: Record<string, string> = {}) {
  return async (request: FastifyRequest): Promise<void> => {
    const body = request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return;
    for (const key of Object.keys(body)) {
      if (fixed[key]) throw invalidBody(fixed[key]);
    }
    const unknown = Object.keys(body).filter((key) => !Object.hasOwn(known, key));
    if (unknown.length > 0) throw invalidBody(`Payload validation error: additional properties not allowed: ${unknown.slice(0, 10).join(', ')}`);
  };
}

/** The global client is a read-only view of the tenant (management/global-client.ts). */
function refuseGlobalClient(tenant: FastifyRequest['tenant'], clientId: string): void {
  if (isGlobalClientId(tenant, clientId)) {
    throw new OperationNotSupported('The global client ("All Applications") is read-only here: it has no secret and no settings of its own, and custom login page HTML is not offered');
  }
}

function hasScope(request: FastifyRequest, ...scopes: string[]): boolean {
  return scopes.some((s) => request.principal.scopes.has(s));
}

export function registerClients(api: App, services: Services): void {
  const { db } = services.store;

  const find = async (tenantId: string, clientId: string): Promise<Client> => {
    const client = await findClient(db, tenantId, clientId);
    if (!client) throw new ClientNotFound();
    return client;
  };
  const seal = (clientId: string, secret: string) => services.sealer.seal(secret, clientSecretContext(clientId));
  const secretOf = (client: Client | NewClient) =>
    client.client_secret_sealed ? services.sealer.unseal(client.client_secret_sealed, clientSecretContext(client.client_id)) : undefined;
  const view = (client: Client | NewClient, keys: boolean, secret?: string): View => ({ keys, secret: keys ? (secret ?? secretOf(client)) : undefined });
  /** `addons` as stored: the Firebase add-on checked and its key sealed, or kept from `previous` when not sent. */
  const storedAddons = (clientId: string, addons: Record<string, unknown>, previous: unknown): Record<string, unknown> => {
    if (addons.firebase === undefined) return addons;
    const previousFirebase = (previous as { firebase?: unknown } | undefined)?.firebase;
    try {
      return { ...addons, firebase: storedFirebaseAddon(services.sealer, clientId, addons.firebase, previousFirebase) };
    } catch (error) {
      if (error instanceof InvalidFirebaseAddon) throw invalidBody(error.message);
      throw error;
    }
  };

  api.get('/clients', {
    ...operation(['read:clients', 'read:client_keys'], {
      summary: 'List clients',
      querystring: ListQuery,
      response: { 200: pagedList(ClientBody, 'clients') },
    }),
    handler: async (request) => {
      const query = request.query;
      const names = parseFields(query.fields);
      let clients = query.is_global ? [] : await listClients(db, request.tenant.id);
      if (query.is_first_party !== undefined) clients = clients.filter((c) => c.is_first_party === query.is_first_party);
      if (query.app_type !== undefined) {
        const types = query.app_type.split(',');
        const unknown = types.filter((t) => !KNOWN_APP_TYPES.has(t));
        if (unknown.length > 0) throw new InvalidInput('querystring', `app_type: unknown application type ${describe(unknown[0]!)}`);
        clients = clients.filter((c) => types.includes(c.app_type));
      }
      if (query.q !== undefined && query.q !== '') {
        // The one Lucene query the reference permits here that has a meaning without organizations.
        if (query.q.trim() !== 'client_grant.allow_any_organization:true') {
          throw new InvalidInput('querystring', 'q: the supported query is client_grant.allow_any_organization:true');
        }
        const ids = new Set((await listClientGrants(db, request.tenant.id)).filter((g) => g.allow_any_organization).map((g) => g.client_id));
        clients = clients.filter((c) => ids.has(c.client_id));
      }
      const keys = hasScope(request, 'read:client_keys');
      const bodies = clients.map((c) => selectFields(present(c, request.tenant.name, view(c, keys)), names, query.include_fields ?? true));
      // The global client (management/global-client.ts) first, as the reference lists it, unless a filter excludes it.
      const globalMatches = query.is_global !== false && query.is_first_party !== false && query.app_type === undefined && (query.q ?? '') === '';
      if (globalMatches) bodies.unshift(selectFields(presentGlobalClient(request.tenant), names, query.include_fields ?? true));
      return paginate(bodies, query, 'clients');
    },
  });

  api.post('/clients', {
    ...operation(['create:clients'], {
      summary: 'Create a client',
      body: CreateBody,
      response: { 201: ClientBody, ...errorResponses('management', { 403: 'operation_not_supported: a setting this server does not offer' }) },
    }),
    preValidation: refuseUnknownProperties(CreateBody.properties, { client_id: 'client_id is generated by the server' }),
    handler: async (request, reply) => {
      const input = Object.fromEntries(Object.entries(request.body).filter(([, v]) => v !== null)) as CreateInput;
      const {
        name,
        app_type,
        is_first_party,
        token_endpoint_auth_method,
        client_authentication_methods,
        client_secret,
        callbacks,
        allowed_logout_urls,
        web_origins,
        allowed_origins,
        grant_types,
        ...documented
      } = input;
      const appType = app_type ?? 'regular_web';
      if (token_endpoint_auth_method && client_authentication_methods) {
        throw invalidBody('client_authentication_methods and token_endpoint_auth_method are mutually exclusive');
      }
      const methods = client_authentication_methods ? buildAuthenticationMethods(client_authentication_methods, undefined) : undefined;
      // Behind client_authentication_methods the endpoint method is kept confidential, so that removing them
      // later falls back to a secret rather than to a public client.
      const endpointMethod: TokenEndpointAuthMethod = methods
        ? 'client_secret_post'
        : (token_endpoint_auth_method ?? (PUBLIC_APP_TYPES.has(appType) ? 'none' : 'client_secret_post'));
      if (endpointMethod === 'none' && client_secret !== undefined) {
        throw invalidBody('client_secret: a public client (token_endpoint_auth_method none) has no secret');
      }
      const secret = client_secret ?? (methods || endpointMethod === 'none' ? undefined : newId.clientSecret());
      const clientId = newId.client();
      const client: NewClient = {
        ...(documented as Partial<ClientProperties>),
        tenant_id: request.tenant.id,
        client_id: clientId,
        name,
        app_type: appType,
        is_first_party: is_first_party ?? true,
        token_endpoint_auth_method: endpointMethod,
        client_secret_sealed: secret === undefined ? null : seal(clientId, secret),
        callbacks: callbacks ?? [],
        allowed_logout_urls: allowed_logout_urls ?? [],
        web_origins: normalizeOrigins('web_origins', web_origins ?? []),
        allowed_origins: normalizeOrigins('allowed_origins', allowed_origins ?? []),
        grant_types: grant_types ?? [...DEFAULT_GRANT_TYPES[appType]],
        ...(methods && { client_authentication_methods: methods }),
      };
      checkFields({ ...input, app_type: appType, callbacks: client.callbacks, allowed_logout_urls: client.allowed_logout_urls }, client);
      if (input.addons) client.addons = storedAddons(clientId, input.addons, undefined);
      await insertClient(db, client);
      // The create response always carries the secret: it is the caller's one chance to read it.
      return reply.code(201).send(present(client, request.tenant.name, { keys: true, secret }));
    },
  });

  api.get('/clients/:id', {
    ...operation(['read:clients', 'read:client_keys'], {
      summary: 'Get a client',
      params: IdParams,
      querystring: Type.Object(FieldsQuery, { additionalProperties: false }),
      response: { 200: ClientBody, ...errorResponses('management', { 404: 'inexistent_client' }) },
    }),
    handler: async (request) => {
      const names = parseFields(request.query.fields);
      if (isGlobalClientId(request.tenant, request.params.id)) return selectFields(presentGlobalClient(request.tenant), names, request.query.include_fields ?? true);
      const client = await find(request.tenant.id, request.params.id);
      const body = present(client, request.tenant.name, view(client, hasScope(request, 'read:client_keys')));
      return selectFields(body, names, request.query.include_fields ?? true);
    },
  });

  api.patch('/clients/:id', {
    ...operation(['update:clients', 'update:client_keys'], {
      summary: 'Update a client',
      params: IdParams,
      body: UpdateBody,
      response: {
        200: ClientBody,
        ...errorResponses('management', {
          403: 'insufficient_scope (client_secret needs update:client_keys), operation_not_supported (the admin client must stay confidential; the global client is read-only)',
          404: 'inexistent_client',
          409: concurrentChangeConflict(),
        }),
      },
    }),
    preValidation: refuseUnknownProperties(UpdateBody.properties, {
      client_id: 'client_id cannot be changed',
      resource_server_identifier: 'resource_server_identifier is set when the client is created and cannot be changed',
    }),
    handler: async (request) => {
      const input = request.body;
      // The reference: client_secret (like signing keys) can only be updated with update:client_keys.
      if (input.client_secret !== undefined && !hasScope(request, 'update:client_keys')) throw new InsufficientScope(['update:client_keys']);
      refuseGlobalClient(request.tenant, request.params.id);
      // Read, change, conditional write; again when another request changed the client meanwhile, so that two
      // PATCHes of different fields both land (store/concurrent-change.ts).
      return retryOnConcurrentChange('client', async () => {
        const existing = await find(request.tenant.id, request.params.id);
        const { created_at: _created, updated_at: _updated, ...current } = existing;
        const next: NewClient = { ...current };
        const record = next as unknown as Record<string, unknown>;
        const handled = new Set(['token_endpoint_auth_method', 'client_authentication_methods', 'client_secret', 'web_origins', 'allowed_origins']);
        for (const [key, value] of Object.entries(input)) {
          if (handled.has(key)) continue;
          if (value === null) delete record[key];
          else record[key] = value;
        }
        if (input.web_origins) next.web_origins = normalizeOrigins('web_origins', input.web_origins);
        if (input.allowed_origins) next.allowed_origins = normalizeOrigins('allowed_origins', input.allowed_origins);

        // How the client authenticates: the last explicit choice wins; both in one request is a contradiction.
        let methods = existing.client_authentication_methods;
        let endpointMethod = existing.token_endpoint_auth_method;
        if (input.client_authentication_methods === null) {
          methods = undefined;
        } else if (input.client_authentication_methods !== undefined) {
          if (input.token_endpoint_auth_method) throw invalidBody('client_authentication_methods and token_endpoint_auth_method are mutually exclusive');
          methods = buildAuthenticationMethods(input.client_authentication_methods, existing.client_authentication_methods);
        }
        if (input.token_endpoint_auth_method === null) {
          if (!methods) throw invalidBody('token_endpoint_auth_method may be null only while client_authentication_methods are set');
        } else if (input.token_endpoint_auth_method !== undefined) {
          endpointMethod = input.token_endpoint_auth_method;
          if (input.client_authentication_methods === undefined) methods = undefined;
        }
        if (methods && endpointMethod === 'none') endpointMethod = 'client_secret_post';
        next.token_endpoint_auth_method = endpointMethod;
        if (methods) next.client_authentication_methods = methods;
        else delete next.client_authentication_methods;

        // The secret: public clients have none; a client that becomes confidential gets one.
        let secret: string | undefined;
        if (!methods && endpointMethod === 'none') {
          if (input.client_secret !== undefined) throw invalidBody('client_secret: a public client (token_endpoint_auth_method none) has no secret');
          next.client_secret_sealed = null;
        } else if (input.client_secret !== undefined) {
          secret = input.client_secret;
        } else if (!methods && !next.client_secret_sealed) {
          secret = newId.clientSecret();
        }
        if (secret !== undefined) next.client_secret_sealed = seal(next.client_id, secret);

        checkFields(input, next);
        if (input.addons) next.addons = storedAddons(next.client_id, input.addons, existing.addons);
        // The admin client holds the Management API grant that bootstrap keeps; it must stay able to use it.
        if (existing.is_system && (!next.grant_types.includes('client_credentials') || registeredMethod(next as Client) === 'none')) {
          throw new OperationNotSupported('The admin client must stay confidential and keep the client_credentials grant type');
        }
        if (!(await replaceClientAsRead(db, next, existing.updated_at))) throw new ConcurrentChange();
        return present(next, request.tenant.name, view(next, hasScope(request, 'read:client_keys', 'update:client_keys'), secret));
      });
    },
  });

  api.delete('/clients/:id', {
    ...operation(['delete:clients'], {
      summary: 'Delete a client',
      params: IdParams,
      response: {
        204: noContent('Deleted, with its grants and tokens'),
        ...errorResponses('management', { 403: 'operation_not_supported: the admin client, the console client and the global client cannot be deleted', 404: 'inexistent_client' }),
      },
    }),
    handler: async (request, reply) => {
      refuseGlobalClient(request.tenant, request.params.id);
      const client = await find(request.tenant.id, request.params.id);
      // The admin client holds the Management API grant that bootstrap recreates on every start, and its
      // credentials are the operator's way in: deleting it would lock the operator out of this API.
      if (client.is_system) throw new OperationNotSupported('The admin client (the Management API client made at first start) cannot be deleted');
      // The console signs its admins in through this client: deleting it from the console would lock them out.
      if (client.is_console) throw new OperationNotSupported('The console client (the admin console\'s own application) cannot be deleted');
      // Its client grants and connection links go in the same statement (ON DELETE CASCADE).
      if (!(await deleteClient(db, request.tenant.id, client.client_id))) throw new ClientNotFound();
      return reply.code(204).send();
    },
  });

  api.post('/clients/:id/rotate-secret', {
    ...operation(['update:client_keys'], {
      summary: "Rotate a client's secret",
      params: IdParams,
      response: { 200: ClientBody, ...errorResponses('management', { 403: 'operation_not_supported: the global client has no secret', 404: 'inexistent_client' }) },
    }),
    handler: async (request) => {
      refuseGlobalClient(request.tenant, request.params.id);
      const client = await find(request.tenant.id, request.params.id);
      const method = registeredMethod(client);
      if (method !== 'client_secret_post' && method !== 'client_secret_basic') {
        throw invalidBody(
          method === 'none'
            ? 'A public client (token_endpoint_auth_method none) has no secret to rotate'
            : `The client authenticates with ${method}, not with a secret`,
        );
      }
      const secret = newId.clientSecret();
      const { created_at: _created, updated_at: _updated, ...current } = client;
      const next: NewClient = { ...current, client_secret_sealed: seal(client.client_id, secret) };
      if (!(await replaceClientSecret(db, client.tenant_id, client.client_id, next.client_secret_sealed!))) throw new ClientNotFound();
      return present(next, request.tenant.name, { keys: true, secret });
    },
  });
}

/**
 * `samlp`: an enterprise SAML 2.0 identity provider (Okta, Entra ID, ADFS…), with Gatehouse as the service
 * provider. The AuthnRequest (HTTP-Redirect or HTTP-POST, signed with the tenant's key when `signSAMLRequest`) and
 * the Response's checks are @node-saml/node-saml's (a response or assertion signature by the configured
 * certificate, the Audience, NotBefore/NotOnOrAfter with skew); around it, what it leaves to us:
 *
 *  - the XML is read under saml-safety.ts first (size, no DTD/entities, no processing instructions, depth);
 *  - one assertion, plainly a child of the Response, and signatures only on the Response or that assertion: a
 *    wrapped assertion never reaches the signature check;
 *  - the Destination and the bearer SubjectConfirmation's Recipient are our ACS URL, its NotOnOrAfter not past;
 *  - InResponseTo is the AuthnRequest of this trip (bound to the login transaction and the browser), and absent
 *    in an IdP-initiated response, which is accepted only when the connection's `idpinitiated.enabled`;
 *  - the assertion ID is used once (a table shared by every node: LocalParty.useAssertionId).
 *
 * Our entity ID (the Audience the IdP must name) is the reference's `urn:auth0:{tenant}:{connection}`, the ACS
 * `/login/callback?connection={connection}`, the SP metadata `/samlp/metadata?connection={connection}`.
 * Users are `samlp|<connection>|<user id>`, the user id from `user_id_attribute` or else the NameID.
 */
import { createHash } from 'node:crypto';
import { Type, type Static } from '@fastify/type-provider-typebox';
import { SAML, ValidateInResponseTo, type SamlConfig } from '@node-saml/node-saml';
import type { Element } from '@xmldom/xmldom';
import { InvalidCertificate, parseCertificate, toPem } from '../crypto/x509-certificates.js';
import { profileFromClaims } from './profile-claims.js';
import { childElements, decodePostMessage, DIGEST_ALGORITHMS, parseSamlXml, SAML_NS, SamlMessageError, SIGNATURE_ALGORITHMS, singleChild } from './saml-safety.js';
import type { CallbackParameters, FederatedProfile, FederationStrategy, LocalParty, UpstreamConnection, UpstreamForm, UpstreamTrip } from './strategy.js';
import { UpstreamError } from './upstream-error.js';
import { checkUpstreamUrl } from './upstream-urls.js';

export const BINDINGS = {
  redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
  post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
} as const;
/** Clocks of the IdP and ours may differ this much (NotBefore, NotOnOrAfter). */
export const CLOCK_SKEW_MS = 60_000;
/** An assertion is remembered at most this long, whatever its NotOnOrAfter says. */
const MAX_REPLAY_WINDOW_MS = 24 * 3600_000;
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

const Url = Type.String({ minLength: 1, maxLength: 2048 });
const AttributeNames = Type.Union([Type.String({ minLength: 1, maxLength: 1000 }), Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), { minItems: 1, maxItems: 20 })]);

export const SamlpOptions = Type.Object(
  {
    signInEndpoint: Url,
    /** The IdP's SingleLogoutService (HTTP-Redirect), for `/v2/logout?federated`; the reference defaults it to signInEndpoint. */
    signOutEndpoint: Type.Optional(Url),
    /** The reference's: true sends no LogoutRequest upstream (federated logout stays local). */
    disableSignout: Type.Optional(Type.Boolean()),
    /** The IdP's signing certificate: base64 of its PEM (as the reference takes it), PEM, or base64 DER. */
    signingCert: Type.Optional(Type.String({ minLength: 1, maxLength: 20_000 })),
    /** Derived from signingCert when it is sent (the reference's stored form); accepted back as read. */
    cert: Type.Optional(Type.String({ minLength: 1, maxLength: 20_000 })),
    thumbprints: Type.Optional(Type.Array(Type.String({ maxLength: 128 }), { maxItems: 10 })),
    signSAMLRequest: Type.Optional(Type.Boolean()),
    signatureAlgorithm: Type.Optional(Type.Union([Type.Literal('rsa-sha256'), Type.Literal('rsa-sha1')])),
    digestAlgorithm: Type.Optional(Type.Union([Type.Literal('sha256'), Type.Literal('sha1')])),
    protocolBinding: Type.Optional(Type.Union([Type.Literal(BINDINGS.redirect), Type.Literal(BINDINGS.post)])),
    user_id_attribute: Type.Optional(Type.String({ maxLength: 1000 })),
    fieldsMap: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 100 }), AttributeNames, { maxProperties: 50 })),
    idpinitiated: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
          client_protocol: Type.Optional(Type.Union([Type.Literal('oidc'), Type.Literal('samlp'), Type.Literal('wsfed')])),
          client_authorizequery: Type.Optional(Type.String({ maxLength: 2048 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** The reference's overrides for an IdP behind a proxy: the Destination and Recipient it writes. */
    destinationUrl: Type.Optional(Url),
    recipientUrl: Type.Optional(Url),
    debug: Type.Optional(Type.Boolean()),
    domain_aliases: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 })),
    icon_url: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: true },
);
type SamlpOptionsValue = Static<typeof SamlpOptions>;

/** Our entity ID toward the IdP, and the Audience its assertions must name (the reference's form). */
export function spEntityId(tenantName: string, connectionName: string): string {
  return `urn:auth0:${tenantName}:${connectionName}`;
}

/** Where the IdP sends its LogoutResponse (the reference's SP metadata names /logout). */
export const SAML_LOGOUT_CALLBACK_PATH = '/logout';

export function samlLogoutCallbackUrl(baseUrl: string): string {
  return `${baseUrl}${SAML_LOGOUT_CALLBACK_PATH}`;
}

/** Whether `/v2/logout?federated` sends this connection's IdP a LogoutRequest (the reference's disableSignout). */
export function signsOut(options: Record<string, unknown>): boolean {
  return options.disableSignout !== true;
}

/** Where the IdP posts its Response (the reference's post-back URL). */
export function assertionConsumerUrl(baseUrl: string, connectionName: string): string {
  return `${baseUrl}/login/callback?connection=${encodeURIComponent(connectionName)}`;
}

/** The certificate text the options carry, as PEM: `signingCert` (base64 of a PEM, a PEM, or base64 DER), else `cert`. */
function certificatePemOf(options: SamlpOptionsValue): string | undefined {
  const text = options.signingCert ?? options.cert;
  if (text === undefined) return undefined;
  if (text.includes('-----BEGIN')) return text;
  const decoded = Buffer.from(text.replace(/\s+/g, ''), 'base64').toString('latin1');
  return decoded.includes('-----BEGIN CERTIFICATE-----') ? decoded : toPem(text);
}

export function samlpCheckOptions(value: Record<string, unknown>): string | undefined {
  const options = value as SamlpOptionsValue;
  for (const field of ['signInEndpoint', 'signOutEndpoint', 'destinationUrl', 'recipientUrl'] as const) {
    const problem = checkUpstreamUrl(field, options[field]);
    if (problem) return problem;
  }
  const pem = certificatePemOf(options);
  if (!pem) return "options.signingCert is required: the identity provider's signing certificate (base64 of its PEM)";
  try {
    parseCertificate(pem);
  } catch (error) {
    if (error instanceof InvalidCertificate) return `options.signingCert ${error.message}`;
    throw error;
  }
  // Our own signatures: SHA-1 is refused, as for every signature this service checks (saml-safety.ts).
  if (options.signatureAlgorithm === 'rsa-sha1') return 'options.signatureAlgorithm rsa-sha1 is not accepted (SHA-1); use rsa-sha256';
  if (options.digestAlgorithm === 'sha1') return 'options.digestAlgorithm sha1 is not accepted (SHA-1); use sha256';
  const idp = options.idpinitiated;
  if (idp?.enabled) {
    if (!idp.client_id) return 'options.idpinitiated.client_id is required when IdP-initiated sign-in is enabled';
    if (idp.client_protocol === 'wsfed') return 'options.idpinitiated.client_protocol wsfed is not supported (oidc or samlp)';
    if (idp.client_authorizequery !== undefined && /[#\s]/.test(idp.client_authorizequery)) return 'options.idpinitiated.client_authorizequery must be a query string (name=value&…)';
  }
  return undefined;
}

/** `cert` (PEM) and `thumbprints` (SHA-1 of the DER, hex, the reference's form) derived from the certificate sent. */
function samlpNormalizeOptions(value: Record<string, unknown>): Record<string, unknown> {
  const options = value as SamlpOptionsValue;
  const certificate = parseCertificate(certificatePemOf(options)!);
  const thumbprint = createHash('sha1').update(certificate.raw).digest('hex');
  return { ...options, cert: certificate.toString(), thumbprints: [thumbprint] };
}

function localOf(upstream: UpstreamConnection): LocalParty {
  if (!upstream.local) throw new UpstreamError('server_error', 'The SAML connection was used without the service provider settings');
  return upstream.local;
}

/** The AuthnRequest's ID: derived from the trip's nonce, so the callback knows which InResponseTo to expect. */
export function authnRequestId(trip: Pick<UpstreamTrip, 'nonce'>): string {
  return `_${createHash('sha256').update(`saml-request:${trip.nonce}`).digest('hex').slice(0, 40)}`;
}

async function samlClient(upstream: UpstreamConnection, extra: Partial<SamlConfig> = {}): Promise<SAML> {
  const options = upstream.options as SamlpOptionsValue;
  const local = localOf(upstream);
  const name = upstream.connection.name;
  const entityId = spEntityId(local.tenantName, name);
  const signing = options.signSAMLRequest ? await local.signingKey() : undefined;
  return new SAML({
    entryPoint: options.signInEndpoint,
    issuer: entityId,
    audience: entityId,
    callbackUrl: assertionConsumerUrl(local.baseUrl, name),
    idpCert: certificatePemOf(options)!,
    authnRequestBinding: options.protocolBinding === BINDINGS.post ? 'HTTP-POST' : 'HTTP-Redirect',
    // HTTP-POST carries the XML as plain base64 (SAML Bindings §3.5.4); only HTTP-Redirect DEFLATEs it.
    skipRequestCompression: options.protocolBinding === BINDINGS.post,
    // The reference's AuthnRequest carries neither a NameIDPolicy nor a RequestedAuthnContext: the IdP decides.
    identifierFormat: null,
    disableRequestedAuthnContext: true,
    ...(signing && { privateKey: signing.privateKeyPem, signatureAlgorithm: 'sha256', digestAlgorithm: 'sha256' }),
    // Either the response or the assertion must be signed (node-saml refuses a response with neither).
    wantAuthnResponseSigned: false,
    wantAssertionsSigned: false,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    // InResponseTo is checked here against the trip (below), not in node-saml's per-process cache.
    validateInResponseTo: ValidateInResponseTo.never,
    ...extra,
  });
}

/**
 * The SP metadata the IdP is configured from: entity ID, ACS (HTTP-POST), and when the connection signs its
 * AuthnRequests, AuthnRequestsSigned with the tenant's signing certificate.
 */
export async function serviceProviderMetadata(upstream: UpstreamConnection): Promise<string> {
  const options = upstream.options as SamlpOptionsValue;
  const saml = await samlClient(upstream, signsOut(options) ? { logoutCallbackUrl: samlLogoutCallbackUrl(localOf(upstream).baseUrl) } : {});
  return saml.generateServiceProviderMetadata(null, options.signSAMLRequest ? (await localOf(upstream).signingKey()).certificatePem : null);
}

function refused(message: string): UpstreamError {
  return new UpstreamError('access_denied', `The identity provider's SAML response was refused: ${message.slice(0, 300)}`);
}

function allElements(root: Element, namespace: string, localName: string): Element[] {
  const found: Element[] = [];
  const list = root.getElementsByTagNameNS(namespace, localName);
  for (let i = 0; i < list.length; i++) found.push(list.item(i)!);
  return found;
}

const text = (element: Element | undefined) => element?.textContent?.trim() ?? '';

interface ReadAssertion {
  nameId: string | undefined;
  nameIdFormat: string | undefined;
  sessionIndex: string | undefined;
  attributes: Map<string, string[]>;
  assertionId: string;
  expiresAt: number;
}

/**
 * The checks node-saml leaves to us, on the one assertion of the response (the one it verified: there is no
 * other). `expected` is the AuthnRequest ID of the trip, or undefined for an IdP-initiated response.
 */
function checkResponse(root: Element, acsUrl: string, options: SamlpOptionsValue, expected: string | undefined, now: number): ReadAssertion {
  if (root.namespaceURI !== SAML_NS.protocol || root.localName !== 'Response') throw refused('it is not a SAML Response.');
  const status = singleChild(root, SAML_NS.protocol, 'Status');
  const code = status && singleChild(status, SAML_NS.protocol, 'StatusCode');
  const value = code?.getAttribute('Value') ?? '';
  if (value !== SUCCESS) {
    const detail = (code && singleChild(code, SAML_NS.protocol, 'StatusCode')?.getAttribute('Value')) || value;
    const message = text(status && singleChild(status, SAML_NS.protocol, 'StatusMessage'));
    throw new UpstreamError('access_denied', `The identity provider refused the sign-in (${detail.split(':').pop()?.slice(0, 64) ?? 'unknown'})${message ? `: ${message.slice(0, 300)}` : ''}`);
  }
  // Wrapping: one assertion in the whole document, directly under the Response; signatures only on those two.
  if (allElements(root, SAML_NS.assertion, 'EncryptedAssertion').length > 0) throw refused('encrypted assertions are not supported.');
  const assertions = allElements(root, SAML_NS.assertion, 'Assertion');
  if (assertions.length !== 1 || assertions[0]!.parentNode !== root) throw refused('it must hold exactly one assertion, directly in the Response.');
  const assertion = assertions[0]!;
  for (const signature of allElements(root, SAML_NS.dsig, 'Signature')) {
    if (signature.parentNode !== root && signature.parentNode !== assertion) throw refused('it carries a signature outside the Response and its assertion.');
  }
  if (childElements(root, SAML_NS.dsig, 'Signature').length > 1 || childElements(assertion, SAML_NS.dsig, 'Signature').length > 1) throw refused('it carries more than one signature on one element.');
  // SHA-1 is refused here as for every signature this service checks (saml-safety.ts).
  for (const method of allElements(root, SAML_NS.dsig, 'SignatureMethod')) {
    if (!Object.values<string>(SIGNATURE_ALGORITHMS).includes(method.getAttribute('Algorithm') ?? '')) throw refused('its signature algorithm is not accepted (RSA with SHA-256 or SHA-512).');
  }
  for (const method of allElements(root, SAML_NS.dsig, 'DigestMethod')) {
    if (!Object.values<string>(DIGEST_ALGORITHMS).includes(method.getAttribute('Algorithm') ?? '')) throw refused('its digest algorithm is not accepted (SHA-256 or SHA-512).');
  }

  const destination = root.getAttribute('Destination');
  if (destination && destination !== (options.destinationUrl ?? acsUrl)) throw refused('its Destination is not this connection.');
  const inResponseTo = root.getAttribute('InResponseTo') || undefined;
  if (inResponseTo !== expected) {
    throw refused(expected === undefined ? 'it answers a request this service did not send (IdP-initiated responses have no InResponseTo).' : 'it does not answer this sign-in (InResponseTo).');
  }

  const subject = singleChild(assertion, SAML_NS.assertion, 'Subject');
  const bearer = subject && childElements(subject, SAML_NS.assertion, 'SubjectConfirmation').find((c) => c.getAttribute('Method') === BEARER);
  const data = bearer && singleChild(bearer, SAML_NS.assertion, 'SubjectConfirmationData');
  if (!data) throw refused('its assertion has no bearer subject confirmation.');
  if (data.getAttribute('Recipient') !== (options.recipientUrl ?? acsUrl)) throw refused('its Recipient is not this connection.');
  const confirmationInResponseTo = data.getAttribute('InResponseTo') || undefined;
  if (confirmationInResponseTo !== undefined && confirmationInResponseTo !== expected) throw refused('its subject confirmation does not answer this sign-in (InResponseTo).');
  const notOnOrAfter = Date.parse(data.getAttribute('NotOnOrAfter') ?? '');
  if (Number.isNaN(notOnOrAfter)) throw refused('its subject confirmation has no NotOnOrAfter.');
  if (now - CLOCK_SKEW_MS >= notOnOrAfter) throw refused('its assertion has expired (NotOnOrAfter).');

  const assertionId = assertion.getAttribute('ID') ?? '';
  if (assertionId === '' || assertionId.length > 256) throw refused('its assertion has no usable ID.');
  const conditions = singleChild(assertion, SAML_NS.assertion, 'Conditions');
  const conditionsEnd = Date.parse(conditions?.getAttribute('NotOnOrAfter') ?? '');
  const expiresAt = Math.min(Number.isNaN(conditionsEnd) ? notOnOrAfter : Math.max(notOnOrAfter, conditionsEnd), now + MAX_REPLAY_WINDOW_MS) + CLOCK_SKEW_MS;

  const attributes = new Map<string, string[]>();
  for (const statement of childElements(assertion, SAML_NS.assertion, 'AttributeStatement')) {
    for (const attribute of childElements(statement, SAML_NS.assertion, 'Attribute')) {
      const name = attribute.getAttribute('Name');
      if (!name) continue;
      const values = childElements(attribute, SAML_NS.assertion, 'AttributeValue').map((v) => v.textContent ?? '');
      attributes.set(name, [...(attributes.get(name) ?? []), ...values]);
    }
  }
  const nameIdElement = subject && singleChild(subject, SAML_NS.assertion, 'NameID');
  const nameId = text(nameIdElement) || undefined;
  const nameIdFormat = nameIdElement?.getAttribute('Format') || undefined;
  const authn = childElements(assertion, SAML_NS.assertion, 'AuthnStatement')[0];
  const sessionIndex = authn?.getAttribute('SessionIndex') || undefined;
  return { nameId, nameIdFormat, sessionIndex, attributes, assertionId, expiresAt };
}

const CLAIMS = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';
/** Where each profile field is looked for, first found wins (the common claim URIs, as the reference maps them). */
const DEFAULT_FIELDS: Record<string, string[]> = {
  email: [`${CLAIMS}/emailaddress`, 'email', 'mail', 'urn:oid:0.9.2342.19200300.100.1.3', 'http://schemas.xmlsoap.org/claims/EmailAddress'],
  email_verified: ['email_verified'],
  name: [`${CLAIMS}/name`, 'http://schemas.microsoft.com/identity/claims/displayname', 'name', 'displayName', 'urn:oid:2.16.840.1.113730.3.1.241'],
  given_name: [`${CLAIMS}/givenname`, 'given_name', 'firstName', 'urn:oid:2.5.4.42'],
  family_name: [`${CLAIMS}/surname`, 'family_name', 'lastName', 'urn:oid:2.5.4.4'],
  nickname: ['nickname', `${CLAIMS}/upn`],
  picture: ['picture'],
};
/** The user id when `user_id_attribute` is not set: the NameID, then these (the reference's order). */
const USER_ID_FALLBACKS = [`${CLAIMS}/nameidentifier`, `${CLAIMS}/upn`, `${CLAIMS}/name`];

export function profileFromAssertion(read: Pick<ReadAssertion, 'nameId' | 'attributes'>, options: Pick<SamlpOptionsValue, 'fieldsMap' | 'user_id_attribute'>): FederatedProfile {
  const first = (names: readonly string[]) => {
    for (const name of names) {
      const value = read.attributes.get(name)?.find((v) => v.trim() !== '');
      if (value !== undefined) return value.trim();
    }
    return undefined;
  };
  const claims: Record<string, unknown> = {};
  for (const [field, names] of Object.entries(DEFAULT_FIELDS)) {
    const mapped = options.fieldsMap?.[field];
    const value = first(mapped === undefined ? names : typeof mapped === 'string' ? [mapped] : mapped);
    if (value !== undefined) claims[field] = value;
  }
  const userIdAttribute = options.user_id_attribute;
  claims.sub = userIdAttribute ? first([userIdAttribute]) : (read.nameId ?? first(USER_ID_FALLBACKS));
  return profileFromClaims(claims, {});
}

async function readResponse(upstream: UpstreamConnection, parameters: CallbackParameters, method: 'GET' | 'POST', expected: string | undefined): Promise<FederatedProfile> {
  const options = upstream.options as SamlpOptionsValue;
  const local = localOf(upstream);
  if (method !== 'POST' || typeof parameters.SAMLResponse !== 'string') throw new UpstreamError('invalid_request', 'The identity provider must answer by HTTP-POST with a SAMLResponse');
  let xml: string;
  let root: Element;
  try {
    xml = decodePostMessage(parameters.SAMLResponse);
    root = parseSamlXml(xml).documentElement!;
  } catch (error) {
    if (error instanceof SamlMessageError) throw refused(error.message);
    throw error;
  }
  const now = Date.now();
  const read = checkResponse(root, assertionConsumerUrl(local.baseUrl, upstream.connection.name), options, expected, now);
  // Signatures, Audience, NotBefore/NotOnOrAfter: node-saml, on exactly the XML read above.
  try {
    await (await samlClient(upstream)).validatePostResponseAsync({ SAMLResponse: Buffer.from(xml, 'utf8').toString('base64') });
  } catch (error) {
    throw refused(error instanceof Error ? error.message.replace(/\s+/g, ' ') : 'it could not be validated.');
  }
  if (!(await local.useAssertionId(read.assertionId, read.expiresAt))) throw refused('its assertion was already used (replay).');
  const profile = profileFromAssertion(read, options);
  // What a LogoutRequest must name later (federated logout), bounded as the IdP could write anything.
  if (read.nameId && read.nameId.length <= 1024 && (read.sessionIndex?.length ?? 0) <= 256 && (read.nameIdFormat?.length ?? 0) <= 256) {
    profile.samlSession = { nameId: read.nameId, ...(read.nameIdFormat && { nameIdFormat: read.nameIdFormat }), ...(read.sessionIndex && { sessionIndex: read.sessionIndex }) };
  }
  return profile;
}

export const samlpStrategy: FederationStrategy & {
  completeUnsolicited(upstream: UpstreamConnection, parameters: CallbackParameters, method: 'GET' | 'POST'): Promise<FederatedProfile>;
} = {
  name: 'samlp',
  isSocial: false,
  optionsSchema: SamlpOptions,
  // Nothing of the IdP's is secret (its certificate is public); the request-signing key is the tenant's.
  secretOptions: [],
  defaultOptions: () => ({ protocolBinding: BINDINGS.redirect, signSAMLRequest: false, signatureAlgorithm: 'rsa-sha256', digestAlgorithm: 'sha256', debug: false }),
  checkOptions: samlpCheckOptions,
  normalizeOptions: samlpNormalizeOptions,
  userIdOf: (connection, subject) => `samlp|${connection.name}|${subject}`,

  async authorizationUrl(upstream, trip): Promise<URL | UpstreamForm> {
    const options = upstream.options as SamlpOptionsValue;
    const saml = await samlClient(upstream, { generateUniqueId: () => authnRequestId(trip) });
    if (options.protocolBinding === BINDINGS.post) {
      const message = await saml.getAuthorizeMessageAsync(trip.state);
      return { action: options.signInEndpoint, fields: { SAMLRequest: String(message.SAMLRequest), RelayState: trip.state } };
    }
    return new URL(await saml.getAuthorizeUrlAsync(trip.state, undefined, {}));
  },

  completeCallback: (upstream, trip, parameters, method) => readResponse(upstream, parameters, method, authnRequestId(trip)),

  /** An IdP-initiated response (no trip): the caller has checked that the connection allows it. */
  completeUnsolicited: (upstream, parameters, method) => readResponse(upstream, parameters, method, undefined),
};

/** What a LogoutRequest names: the NameID and SessionIndex of the assertion the user signed in with. */
export interface SamlSessionRef {
  nameId: string;
  nameIdFormat?: string | undefined;
  sessionIndex?: string | undefined;
}

/**
 * The LogoutRequest toward the IdP's SingleLogoutService (signOutEndpoint, else signInEndpoint, as the
 * reference), by HTTP-Redirect, signed with the tenant's key when the connection signs its requests; undefined
 * when the connection does not sign out upstream.
 */
export async function upstreamLogoutUrl(upstream: UpstreamConnection, session: SamlSessionRef, requestId: string, relayState: string): Promise<URL | undefined> {
  const options = upstream.options as SamlpOptionsValue;
  if (!signsOut(options)) return undefined;
  const saml = await samlClient(upstream, { logoutUrl: options.signOutEndpoint ?? options.signInEndpoint, generateUniqueId: () => requestId });
  const profile = {
    issuer: spEntityId(localOf(upstream).tenantName, upstream.connection.name),
    nameID: session.nameId,
    nameIDFormat: session.nameIdFormat ?? 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
    ...(session.sessionIndex && { sessionIndex: session.sessionIndex }),
  };
  return new URL(await saml.getLogoutUrlAsync(profile, relayState, {}));
}

/** The IdP's signing certificate, for checking what it sends outside a sign-in (a LogoutResponse). */
export function idpCertificatePem(options: Record<string, unknown>): string | undefined {
  return certificatePemOf(options as SamlpOptionsValue);
}

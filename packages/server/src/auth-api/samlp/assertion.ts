/**
 * The SAML Response Gatehouse sends to a service provider after a sign-in (SAML Core §3.3.3, the Web Browser
 * SSO profile §4.1.4.2): one Assertion with a bearer SubjectConfirmation for the ACS URL, conditions bounded by
 * the add-on's `lifetimeInSeconds` and restricted to the audience, the AuthnStatement with the session's
 * index, and the user's attributes through `mappings`. The Assertion is signed (or, with `signResponse`, the
 * Response instead, as the reference does) by the tenant's current key, with xml-crypto.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { SignedXml } from 'xml-crypto';
import type { SigningKey } from '../../crypto/key-ring.js';
import { DIGEST_ALGORITHMS, SIGNATURE_ALGORITHMS, xmlEscape } from '../../federation/saml-safety.js';
import { persistentNameId } from '../../store/saml-sessions.js';
import type { Database } from '../../store/schema.js';
import type { SsoSession } from '../../store/sso-sessions.js';
import { displayName, displayNickname } from '../../store/user-names.js';
import type { User } from '../../store/users.js';
import { UPN_CLAIM, type SamlSettings } from './addon.js';

export const NS = 'xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"';
const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';

/** An xsd:ID: a letter or underscore first. */
export const samlId = () => `_${randomBytes(20).toString('hex')}`;
export const instant = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The profile as SAML attributes are mapped from it (the reference's user profile paths). */
export function samlProfile(user: User): Record<string, unknown> {
  return {
    user_id: user.user_id,
    email: user.email ?? undefined,
    email_verified: user.email ? user.email_verified : undefined,
    username: user.username ?? undefined,
    phone_number: user.phone_number ?? undefined,
    name: displayName(user),
    nickname: displayNickname(user),
    given_name: user.profile.given_name,
    family_name: user.profile.family_name,
    picture: user.profile.picture,
    user_metadata: user.user_metadata,
    app_metadata: user.app_metadata,
  };
}

function at(profile: Record<string, unknown>, path: string): unknown {
  let value: unknown = profile;
  for (const part of path.split('.')) {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** An attribute's values and the xs:type they are sent with. */
export interface SamlAttribute {
  values: string[];
  type: 'xs:string' | 'xs:boolean' | 'xs:double' | 'xs:anyType';
}

function attribute(value: unknown, typed: boolean): SamlAttribute | undefined {
  const scalars = (Array.isArray(value) ? value : [value]).filter((v) => v !== undefined && v !== null);
  if (scalars.length === 0) return undefined;
  const kinds = new Set(scalars.map((v) => typeof v));
  const values = scalars.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v)));
  // As the reference's typedAttributes: the type inferred from the values (one kind only), else xs:anyType.
  const kind = kinds.size === 1 ? [...kinds][0] : undefined;
  const type = !typed ? 'xs:anyType' : kind === 'string' ? 'xs:string' : kind === 'boolean' ? 'xs:boolean' : kind === 'number' ? 'xs:double' : 'xs:anyType';
  return { values, type };
}

/** Where claims without a mapping go (passthroughClaimsWithNoMapping), unless mapUnknownClaimsAsIs. */
export const PASSTHROUGH_PREFIX = 'http://schemas.auth0.com/';

/** The user's identity as mapIdentities adds it (no upstream tokens: those never leave in an assertion here). */
export interface SamlIdentity {
  provider: string;
  connection: string;
  isSocial: boolean;
  user_id: string;
}

/**
 * Attribute name → values, from the profile: through the mappings; then, with passthroughClaimsWithNoMapping,
 * every other top-level claim that is not an object (metadata objects only through mappings), under
 * PASSTHROUGH_PREFIX or as-is; the UPN; and with mapIdentities, the user's identity under
 * `http://schemas.auth0.com/identities/default/…`.
 */
export function mapAttributes(profile: Record<string, unknown>, settings: SamlSettings, identity?: SamlIdentity): Map<string, SamlAttribute> {
  const attributes = new Map<string, SamlAttribute>();
  const put = (name: string, value: unknown) => {
    const found = attribute(value, settings.typedAttributes);
    if (found && !attributes.has(name)) attributes.set(name, found);
  };
  for (const [path, name] of Object.entries(settings.mappings)) put(name, at(profile, path));
  if (settings.passthroughClaimsWithNoMapping) {
    const mapped = new Set(Object.keys(settings.mappings).map((path) => path.split('.')[0]));
    for (const [claim, value] of Object.entries(profile)) {
      if (mapped.has(claim) || (value !== null && typeof value === 'object' && !Array.isArray(value))) continue;
      put(settings.mapUnknownClaimsAsIs ? claim : `${PASSTHROUGH_PREFIX}${claim}`, value);
    }
  }
  if (settings.createUpnClaim && typeof profile.email === 'string') put(UPN_CLAIM, profile.email);
  if (settings.mapIdentities && identity) {
    for (const [field, value] of Object.entries(identity)) put(`${PASSTHROUGH_PREFIX}identities/default/${field}`, value);
  }
  return attributes;
}

/** The NameID: the first probe (an attribute name) with a value; the user id when none has one. */
export function nameIdentifier(attributes: Map<string, SamlAttribute>, settings: SamlSettings, user: User): string {
  for (const probe of settings.nameIdentifierProbes) {
    const found = attributes.get(probe)?.values[0];
    if (found) return found;
  }
  return user.user_id;
}

export const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

/** The NameID as sent: its value and, for a persistent one, the SPNameQualifier it is scoped to. */
export interface SubjectName {
  value: string;
  spNameQualifier?: string;
}

/**
 * The NameID for this application. With the persistent format and no `nameIdentifierProbes` of its own, a
 * pseudonym made for this user and this application (stable, opaque, different for every application); otherwise
 * the probes, as the reference does for every format.
 */
export async function subjectName(db: Kysely<Database>, input: { tenantId: string; clientId: string; audience: string; settings: SamlSettings; user: User }): Promise<SubjectName> {
  const { settings, user } = input;
  if (settings.nameIdentifierFormat === PERSISTENT && !settings.nameIdentifierProbesSet) {
    return { value: await persistentNameId(db, input.tenantId, input.clientId, user.user_id), spNameQualifier: input.audience };
  }
  return { value: nameIdentifier(mapAttributes(samlProfile(user), settings), settings, user) };
}

/** The SessionIndex: names the SSO session to this service provider without revealing its id. */
export function sessionIndex(session: Pick<SsoSession, 'id'>): string {
  return `_${createHash('sha256').update(`saml-session:${session.id}`).digest('hex').slice(0, 40)}`;
}

export interface AssertionInput {
  issuer: string;
  acsUrl: string;
  audience: string;
  inResponseTo?: string;
  user: User;
  session: SsoSession;
  settings: SamlSettings;
  key: SigningKey;
  certificatePem: string;
  now?: number;
  /** From subjectName; without it, the probes. */
  nameId?: SubjectName;
  /** The user's identity, for mapIdentities. */
  identity?: SamlIdentity;
}

/** Signs the element at `target` (an XPath to the root or the Assertion), the signature after its Issuer. */
export function signSamlXml(xml: string, target: string, input: Pick<AssertionInput, 'key' | 'certificatePem' | 'settings'>): string {
  const signer = new SignedXml({
    privateKey: input.key.privateKey,
    publicCert: input.certificatePem,
    signatureAlgorithm: SIGNATURE_ALGORITHMS[input.settings.signatureAlgorithm],
    canonicalizationAlgorithm: EXC_C14N,
  });
  signer.addReference({ xpath: target, transforms: [ENVELOPED, EXC_C14N], digestAlgorithm: DIGEST_ALGORITHMS[input.settings.digestAlgorithm] });
  // The schema puts ds:Signature right after the element's Issuer.
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: `${target}/*[local-name(.)='Issuer']`, action: 'after' } });
  return signer.getSignedXml();
}

/** `<saml:NameID>` with its format (and SPNameQualifier for a persistent one). */
export function nameIdXml(format: string, name: SubjectName): string {
  const qualifier = name.spNameQualifier !== undefined ? ` SPNameQualifier="${xmlEscape(name.spNameQualifier)}"` : '';
  return `<saml:NameID Format="${xmlEscape(format)}"${qualifier}>${xmlEscape(name.value)}</saml:NameID>`;
}

const RESPONSE = "/*[local-name(.)='Response']";
const ASSERTION = `${RESPONSE}/*[local-name(.)='Assertion']`;

/** The signed SAML Response (XML text). */
export function buildSamlResponse(input: AssertionInput): string {
  const { settings, user, session } = input;
  const now = input.now ?? Date.now();
  const expires = instant(now + settings.lifetimeInSeconds * 1000);
  const attributes = mapAttributes(samlProfile(user), settings, input.identity);
  const nameId = input.nameId ?? { value: nameIdentifier(attributes, settings, user) };
  const inResponseTo = input.inResponseTo ? ` InResponseTo="${xmlEscape(input.inResponseTo)}"` : '';
  const destination = settings.destination ?? input.acsUrl;
  const recipient = settings.recipient ?? input.acsUrl;
  const nameFormat = settings.includeAttributeNameFormat ? ' NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:uri"' : '';
  const attributeXml = [...attributes]
    .map(
      ([name, { values, type }]) =>
        `<saml:Attribute Name="${xmlEscape(name)}"${nameFormat}>${values.map((v) => `<saml:AttributeValue xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="${type}">${xmlEscape(v)}</saml:AttributeValue>`).join('')}</saml:Attribute>`,
    )
    .join('');
  const issueInstant = instant(now);
  const assertion =
    `<saml:Assertion ID="${samlId()}" Version="2.0" IssueInstant="${issueInstant}">` +
    `<saml:Issuer>${xmlEscape(input.issuer)}</saml:Issuer>` +
    `<saml:Subject>${nameIdXml(settings.nameIdentifierFormat, nameId)}` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData${inResponseTo} NotOnOrAfter="${expires}" Recipient="${xmlEscape(recipient)}"/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${issueInstant}" NotOnOrAfter="${expires}"><saml:AudienceRestriction><saml:Audience>${xmlEscape(input.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${instant(session.authenticated_at)}" SessionIndex="${sessionIndex(session)}" SessionNotOnOrAfter="${instant(session.expires_at)}"><saml:AuthnContext><saml:AuthnContextClassRef>${xmlEscape(settings.authnContextClassRef)}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    (attributeXml ? `<saml:AttributeStatement>${attributeXml}</saml:AttributeStatement>` : '') +
    `</saml:Assertion>`;
  const response =
    `<samlp:Response ${NS} ID="${samlId()}" Version="2.0" IssueInstant="${issueInstant}" Destination="${xmlEscape(destination)}"${inResponseTo}>` +
    `<saml:Issuer>${xmlEscape(input.issuer)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    assertion +
    `</samlp:Response>`;
  return signSamlXml(response, settings.signResponse ? RESPONSE : ASSERTION, input);
}

/** A Response that says the sign-in failed (status `code`, e.g. NoPassive), signed as a whole. */
export function buildSamlErrorResponse(input: Omit<AssertionInput, 'user' | 'session'>, code: string, message: string): string {
  const issueInstant = instant(input.now ?? Date.now());
  const inResponseTo = input.inResponseTo ? ` InResponseTo="${xmlEscape(input.inResponseTo)}"` : '';
  const response =
    `<samlp:Response ${NS} ID="${samlId()}" Version="2.0" IssueInstant="${issueInstant}" Destination="${xmlEscape(input.settings.destination ?? input.acsUrl)}"${inResponseTo}>` +
    `<saml:Issuer>${xmlEscape(input.issuer)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Responder"><samlp:StatusCode Value="${xmlEscape(code)}"/></samlp:StatusCode><samlp:StatusMessage>${xmlEscape(message)}</samlp:StatusMessage></samlp:Status>` +
    `</samlp:Response>`;
  return signSamlXml(response, RESPONSE, input);
}

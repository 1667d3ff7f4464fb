/**
 * `addons.samlp` of an application: the reference's settings for Gatehouse as the SAML identity provider of
 * that application (a service provider). Stored as sent (the Management API echoes it); read here with the
 * reference's defaults filled in. Validation says which field is wrong and why, in the Management API's words.
 */
import type { X509Certificate } from 'node:crypto';
import { InvalidCertificate, parseCertificate } from '../../crypto/x509-certificates.js';
import { DIGEST_ALGORITHMS, SIGNATURE_ALGORITHMS } from '../../federation/saml-safety.js';
import type { Client } from '../../store/clients.js';

export const BINDINGS = {
  post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
  redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
} as const;

export const NAME_ID_FORMATS = [
  'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
  'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
] as const;

const CLAIM = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';
/** The reference's default attribute names, by profile path. */
export const DEFAULT_MAPPINGS: Readonly<Record<string, string>> = {
  user_id: `${CLAIM}/nameidentifier`,
  email: `${CLAIM}/emailaddress`,
  name: `${CLAIM}/name`,
  given_name: `${CLAIM}/givenname`,
  family_name: `${CLAIM}/surname`,
};
export const UPN_CLAIM = `${CLAIM}/upn`;
export const DEFAULT_NAME_ID_PROBES = [`${CLAIM}/nameidentifier`, `${CLAIM}/emailaddress`, `${CLAIM}/name`];

export interface SamlpAddon {
  audience?: string;
  recipient?: string;
  destination?: string;
  mappings?: Record<string, string>;
  createUpnClaim?: boolean;
  passthroughClaimsWithNoMapping?: boolean;
  mapUnknownClaimsAsIs?: boolean;
  mapIdentities?: boolean;
  nameIdentifierFormat?: string;
  nameIdentifierProbes?: string[];
  signatureAlgorithm?: string;
  digestAlgorithm?: string;
  lifetimeInSeconds?: number;
  signResponse?: boolean;
  binding?: string;
  logout?: { callback?: string; slo_enabled?: boolean };
  signingCert?: string;
  authnContextClassRef?: string;
  /** Ours: the RelayState of an IdP-initiated sign-in that names none. */
  defaultRelayState?: string;
  issuer?: string;
  typedAttributes?: boolean;
  includeAttributeNameFormat?: boolean;
}

/** The add-on with every default resolved, as the endpoints use it. */
export interface SamlSettings {
  audience: string | undefined;
  recipient: string | undefined;
  destination: string | undefined;
  mappings: Record<string, string>;
  createUpnClaim: boolean;
  passthroughClaimsWithNoMapping: boolean;
  mapUnknownClaimsAsIs: boolean;
  mapIdentities: boolean;
  typedAttributes: boolean;
  nameIdentifierFormat: string;
  nameIdentifierProbes: string[];
  /** Whether the add-on names its own probes (a persistent NameID is then taken from them, as the reference does). */
  nameIdentifierProbesSet: boolean;
  signatureAlgorithm: keyof typeof SIGNATURE_ALGORITHMS;
  digestAlgorithm: keyof typeof DIGEST_ALGORITHMS;
  lifetimeInSeconds: number;
  signResponse: boolean;
  binding: string;
  logoutCallback: string | undefined;
  sloEnabled: boolean;
  signingCert: X509Certificate | undefined;
  authnContextClassRef: string;
  defaultRelayState: string | undefined;
  issuer: string | undefined;
  includeAttributeNameFormat: boolean;
}

export class InvalidSamlpAddon extends Error {}

const fail = (field: string, why: string): never => {
  throw new InvalidSamlpAddon(`addons.samlp.${field}: ${why}`);
};

const STRING_FIELDS = ['audience', 'recipient', 'destination', 'nameIdentifierFormat', 'signatureAlgorithm', 'digestAlgorithm', 'binding', 'signingCert', 'authnContextClassRef', 'defaultRelayState', 'issuer'] as const;
const BOOLEAN_FIELDS = ['createUpnClaim', 'passthroughClaimsWithNoMapping', 'mapUnknownClaimsAsIs', 'mapIdentities', 'signResponse', 'typedAttributes', 'includeAttributeNameFormat'] as const;
const KNOWN = new Set<string>([...STRING_FIELDS, ...BOOLEAN_FIELDS, 'mappings', 'nameIdentifierProbes', 'lifetimeInSeconds', 'logout']);

function checkUrl(field: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(field, `${JSON.stringify(value.slice(0, 100))} is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(field, 'must be an http or https URL');
  if (url.username || url.password) fail(field, 'must not carry credentials');
}

/** Checks `addons.samlp` as sent to the Management API; throws InvalidSamlpAddon saying what is wrong. */
export function validateSamlpAddon(value: unknown): void {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return fail('', 'must be an object');
  const addon = value as Record<string, unknown>;
  for (const key of Object.keys(addon)) if (!KNOWN.has(key)) fail(key, 'is not a setting of the samlp add-on');
  for (const key of STRING_FIELDS) {
    const v = addon[key];
    if (v === undefined) continue;
    if (typeof v !== 'string') fail(key, 'must be a string');
    if ((v as string).length > (key === 'signingCert' ? 16_384 : 2048)) fail(key, 'is too long');
  }
  for (const key of BOOLEAN_FIELDS) if (addon[key] !== undefined && typeof addon[key] !== 'boolean') fail(key, 'must be a boolean');
  const a = addon as SamlpAddon;
  if (a.recipient) checkUrl('recipient', a.recipient);
  if (a.destination) checkUrl('destination', a.destination);
  if (a.signatureAlgorithm !== undefined && !(a.signatureAlgorithm in SIGNATURE_ALGORITHMS)) fail('signatureAlgorithm', 'must be rsa-sha256 or rsa-sha512 (SHA-1 is not offered)');
  if (a.digestAlgorithm !== undefined && !(a.digestAlgorithm in DIGEST_ALGORITHMS)) fail('digestAlgorithm', 'must be sha256 or sha512 (SHA-1 is not offered)');
  if (a.binding !== undefined && a.binding !== BINDINGS.post && a.binding !== 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST') fail('binding', `must be ${BINDINGS.post}: responses are sent with the HTTP-POST binding`);
  if (a.nameIdentifierFormat !== undefined && !(NAME_ID_FORMATS as readonly string[]).includes(a.nameIdentifierFormat)) fail('nameIdentifierFormat', `must be one of ${NAME_ID_FORMATS.join(', ')}`);
  if (addon.lifetimeInSeconds !== undefined && (!Number.isInteger(addon.lifetimeInSeconds) || (addon.lifetimeInSeconds as number) < 1 || (addon.lifetimeInSeconds as number) > 86_400)) {
    fail('lifetimeInSeconds', 'must be an integer from 1 to 86400');
  }
  if (addon.mappings !== undefined) {
    const m = addon.mappings;
    if (!m || typeof m !== 'object' || Array.isArray(m)) fail('mappings', 'must be an object of profile paths to SAML attribute names');
    const entries = Object.entries(m as Record<string, unknown>);
    if (entries.length > 100) fail('mappings', 'may have at most 100 entries');
    for (const [path, name] of entries) {
      if (!/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+){0,4}$/.test(path)) fail('mappings', `${JSON.stringify(path.slice(0, 100))} is not a profile path (like user_metadata.department)`);
      if (typeof name !== 'string' || name.length === 0 || name.length > 1024) fail(`mappings.${path}`, 'must be a SAML attribute name (a non-empty string)');
    }
  }
  if (addon.nameIdentifierProbes !== undefined) {
    const p = addon.nameIdentifierProbes;
    if (!Array.isArray(p) || p.length > 20 || p.some((v) => typeof v !== 'string' || v.length === 0 || v.length > 1024)) fail('nameIdentifierProbes', 'must be a list of at most 20 attribute names');
  }
  if (addon.logout !== undefined) {
    const l = addon.logout as Record<string, unknown> | null;
    if (!l || typeof l !== 'object' || Array.isArray(l)) return fail('logout', 'must be an object {callback, slo_enabled}');
    for (const key of Object.keys(l)) if (key !== 'callback' && key !== 'slo_enabled') fail(`logout.${key}`, 'is not a logout setting');
    if (l.callback !== undefined) {
      if (typeof l.callback !== 'string') fail('logout.callback', 'must be a string');
      else checkUrl('logout.callback', l.callback);
    }
    if (l.slo_enabled !== undefined && typeof l.slo_enabled !== 'boolean') fail('logout.slo_enabled', 'must be a boolean');
  }
  if (a.signingCert) {
    try {
      parseCertificate(a.signingCert);
    } catch (error) {
      if (error instanceof InvalidCertificate) fail('signingCert', error.message);
      throw error;
    }
  }
}

/** The client's samlp add-on with defaults, or undefined when the application has none. */
export function samlSettings(client: Client): SamlSettings | undefined {
  const addons = (client as { addons?: Record<string, unknown> }).addons;
  const addon = addons?.samlp as SamlpAddon | undefined;
  if (!addon || typeof addon !== 'object') return undefined;
  return {
    audience: addon.audience || undefined,
    recipient: addon.recipient || undefined,
    destination: addon.destination || undefined,
    mappings: { ...DEFAULT_MAPPINGS, ...(addon.mappings ?? {}) },
    createUpnClaim: addon.createUpnClaim ?? true,
    passthroughClaimsWithNoMapping: addon.passthroughClaimsWithNoMapping ?? true,
    mapUnknownClaimsAsIs: addon.mapUnknownClaimsAsIs ?? false,
    mapIdentities: addon.mapIdentities ?? true,
    typedAttributes: addon.typedAttributes ?? true,
    nameIdentifierFormat: addon.nameIdentifierFormat ?? NAME_ID_FORMATS[0],
    nameIdentifierProbes: addon.nameIdentifierProbes ?? DEFAULT_NAME_ID_PROBES,
    nameIdentifierProbesSet: addon.nameIdentifierProbes !== undefined,
    signatureAlgorithm: (addon.signatureAlgorithm as keyof typeof SIGNATURE_ALGORITHMS | undefined) ?? 'rsa-sha256',
    digestAlgorithm: (addon.digestAlgorithm as keyof typeof DIGEST_ALGORITHMS | undefined) ?? 'sha256',
    lifetimeInSeconds: addon.lifetimeInSeconds ?? 3600,
    signResponse: addon.signResponse ?? false,
    binding: BINDINGS.post,
    logoutCallback: addon.logout?.callback || undefined,
    sloEnabled: addon.logout?.slo_enabled ?? true,
    signingCert: addon.signingCert ? parseCertificate(addon.signingCert) : undefined,
    authnContextClassRef: addon.authnContextClassRef ?? 'urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified',
    defaultRelayState: addon.defaultRelayState || undefined,
    issuer: addon.issuer || undefined,
    includeAttributeNameFormat: addon.includeAttributeNameFormat ?? true,
  };
}

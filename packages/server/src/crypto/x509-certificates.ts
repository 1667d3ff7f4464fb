/**
 * X.509 certificates over the tenant's signing keys, and parsing of certificates we are given.
 *
 * SAML publishes keys as certificates. Ours are self-signed over the tenant's RSA keys (the key ring's), and
 * deterministic: the same key always yields the same bytes (fixed serial from the kid, fixed validity window,
 * RSA PKCS#1 v1.5 signatures are deterministic), so every node and every restart publishes the same
 * certificate without storing it, and service providers that pin a fingerprint keep trusting it.
 */
import { createHash, webcrypto, X509Certificate, type KeyObject } from 'node:crypto';
import { X509CertificateGenerator } from '@peculiar/x509';

/** A window wide enough to never matter (SAML trusts the key, not the dates), fixed for determinism. */
const NOT_BEFORE = new Date('2024-01-01T00:00:00Z');
const NOT_AFTER = new Date('2049-12-31T23:59:59Z');
const RSA_SHA256 = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;

const cache = new Map<string, Promise<string>>();

/** Distinguished-name text for a subject: the characters RFC 4514 would escape are dropped. */
function commonName(value: string): string {
  return value.replace(/[,+"\\<>;=#\n\r]/g, '').slice(0, 64) || 'gatehouse';
}

/**
 * The self-signed certificate (PEM) of an RSA signing key, with `subject` as its common name. Cached per kid
 * and subject.
 */
export function signingCertificate(key: { kid: string; privateKey: KeyObject }, subject: string): Promise<string> {
  const cacheKey = `${key.kid}\n${subject}`;
  let pem = cache.get(cacheKey);
  if (!pem) {
    pem = createCertificate(key, subject);
    cache.set(cacheKey, pem);
    pem.catch(() => cache.delete(cacheKey));
  }
  return pem;
}

async function createCertificate(key: { kid: string; privateKey: KeyObject }, subject: string): Promise<string> {
  const privateJwk = key.privateKey.export({ format: 'jwk' });
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = privateJwk;
  const subtle = webcrypto.subtle;
  const privateKey = await subtle.importKey('jwk', privateJwk, RSA_SHA256, false, ['sign']);
  const publicKey = await subtle.importKey('jwk', publicJwk, RSA_SHA256, true, ['verify']);
  // A positive serial (the leading hex digit below 8) derived from the kid.
  const serial = `1${createHash('sha256').update(key.kid).digest('hex').slice(0, 31)}`;
  const certificate = await X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serial,
      name: `CN=${commonName(subject)}`,
      notBefore: NOT_BEFORE,
      notAfter: NOT_AFTER,
      signingAlgorithm: RSA_SHA256,
      keys: { privateKey, publicKey },
    },
    webcrypto as unknown as Parameters<typeof X509CertificateGenerator.createSelfSigned>[1],
  );
  return certificate.toString('pem');
}

/** The base64 DER of a PEM certificate, as `<ds:X509Certificate>` carries it. */
export function certificateBody(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
}

/** PEM from base64 DER (with or without PEM armour and whitespace). */
export function toPem(certificate: string): string {
  const body = certificateBody(certificate);
  return `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END CERTIFICATE-----\n`;
}

export class InvalidCertificate extends Error {}

/**
 * A certificate we are given (a service provider's, an identity provider's): PEM or bare base64 DER, RSA of at
 * least 2048 bits. Dates are not checked: SAML peers commonly sign with long-expired self-signed certificates,
 * and the trust is in the key registered here, not in a chain.
 */
export function parseCertificate(text: string): X509Certificate {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(toPem(text));
  } catch {
    throw new InvalidCertificate('is not a valid X.509 certificate (PEM or base64 DER)');
  }
  const key = certificate.publicKey;
  if (key.asymmetricKeyType !== 'rsa') throw new InvalidCertificate(`holds a ${key.asymmetricKeyType ?? 'unknown'} key; only RSA keys are supported`);
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < 2048) throw new InvalidCertificate(`holds an RSA key of ${bits} bits; at least 2048 are required`);
  return certificate;
}

/**
 * mTLS behind an edge (RFC 8705): TLS ends at the customer's edge, which forwards the client certificate in
 * `client-certificate` (URL-encoded PEM) and its CA check in `client-certificate-ca-verified`. Those headers are
 * believed only when `cname-api-key` matches the tenant's custom-domain API key (see edgeCertificate).
 *  - tls_client_auth: the CA verified the certificate and its subject DN equals a registered one;
 *  - self_signed_tls_client_auth: the certificate is one of the registered certificates.
 * Either way the certificate must be within its validity period.
 */
import { createHash, timingSafeEqual, X509Certificate } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Tenant } from '../../store/tenants.js';
import { InvalidClient } from '../errors.js';
import type { ClientAuthenticator } from './types.js';

const MAX_CERT_HEADER = 8192;

/** The forwarded certificate, if a trusted edge sent one; spoofed headers (no or wrong API key) are ignored. */
export function edgeCertificate(request: FastifyRequest, tenant: Tenant): { pem: string; caVerified: boolean } | undefined {
  const expected = tenant.settings.custom_domain_api_key_sha256;
  const apiKey = request.headers['cname-api-key'];
  const header = request.headers['client-certificate'];
  if (!expected || typeof apiKey !== 'string' || typeof header !== 'string' || header.length > MAX_CERT_HEADER) return undefined;
  const presented = createHash('sha256').update(apiKey, 'utf8').digest();
  const stored = Buffer.from(expected, 'hex');
  if (stored.length !== presented.length || !timingSafeEqual(presented, stored)) return undefined;
  let pem: string;
  try {
    pem = decodeURIComponent(header);
  } catch {
    return undefined;
  }
  return { pem, caVerified: request.headers['client-certificate-ca-verified'] === 'SUCCESS' };
}

function parse(pem: string): X509Certificate | undefined {
  try {
    const cert = new X509Certificate(pem);
    const now = Date.now();
    return Date.parse(cert.validFrom) <= now && now <= Date.parse(cert.validTo) ? cert : undefined;
  } catch {
    return undefined;
  }
}

/** A DN as a set of `type=value` pairs, whatever the separators (`, ` or newlines) and case of types. */
function dnParts(dn: string): string {
  return dn
    .split(/\n|,(?=\s*[A-Za-z][\w.-]*\s*=)/)
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const eq = part.indexOf('=');
      return `${part.slice(0, eq).trim().toUpperCase()}=${part.slice(eq + 1).trim()}`;
    })
    .sort()
    .join('\n');
}

export const tlsClientAuth: ClientAuthenticator = async ({ client, presented }) => {
  const cert = presented.certificate?.caVerified ? parse(presented.certificate.pem) : undefined;
  if (!cert) throw new InvalidClient();
  const subject = dnParts(cert.subject);
  const registered = client.client_authentication_methods?.tls_client_auth?.credentials ?? [];
  if (!registered.some((c) => dnParts(c.subject_dn) === subject)) throw new InvalidClient();
};

export const selfSignedTlsClientAuth: ClientAuthenticator = async ({ client, presented }) => {
  const cert = presented.certificate ? parse(presented.certificate.pem) : undefined;
  if (!cert) throw new InvalidClient();
  const registered = client.client_authentication_methods?.self_signed_tls_client_auth?.credentials ?? [];
  const matches = registered.some((c) => {
    try {
      return new X509Certificate(c.pem).fingerprint256 === cert.fingerprint256;
    } catch {
      return false;
    }
  });
  if (!matches) throw new InvalidClient();
};

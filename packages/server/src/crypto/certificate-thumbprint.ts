/**
 * The X.509 certificate thumbprint a certificate-bound access token carries as `cnf["x5t#S256"]` (RFC 8705
 * §3.1): the base64url SHA-256 of the certificate's DER encoding. Only a certificate within its validity period
 * has one here, so an expired client certificate binds nothing and matches nothing.
 */
import { createHash, X509Certificate } from 'node:crypto';

export function certificateThumbprint(pem: string, now = Date.now()): string | undefined {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pem);
  } catch {
    return undefined;
  }
  if (now < Date.parse(certificate.validFrom) || Date.parse(certificate.validTo) < now) return undefined;
  return createHash('sha256').update(certificate.raw).digest('base64url');
}

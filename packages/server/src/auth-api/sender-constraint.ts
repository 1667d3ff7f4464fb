/**
 * Sender-constrained access tokens: which a token request must get, and what binds them. Two mechanisms:
 *  - DPoP (RFC 9449, dpop.ts): the token carries `cnf.jkt`, the thumbprint of the key that signed the proof;
 *  - mTLS (RFC 8705 §3): the token carries `cnf["x5t#S256"]`, the thumbprint of the client certificate the
 *    trusted edge forwarded (client-auth/tls-client-auth.ts edgeCertificate), and resource endpoints accept it
 *    only with the same certificate.
 * A client asks for certificate-bound tokens with `tls_client_certificate_bound_access_tokens` (RFC 8705 §3.4's
 * client metadata) or a `compliance_level` whose sender constraint is mTLS; such a client calling without a
 * certificate gets an error rather than an unbound token (the choice §3.4 leaves to the server).
 */
import { fapi2Profile } from './fapi-profile.js';
import type { FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';
import { certificateThumbprint } from '../crypto/certificate-thumbprint.js';
import { InvalidRequest } from '../http/errors.js';
import type { Services } from '../services.js';
import type { Client } from '../store/clients.js';
import { edgeCertificate } from './client-auth/tls-client-auth.js';
import type { VerifiedProof } from '../crypto/dpop.js';

/** FAPI profiles whose sender constraint is mTLS (the second part of the name). */
const MTLS_BOUND_LEVELS = new Set(['fapi1_adv_mtls_par', 'fapi2_sp_pkj_mtls', 'fapi2_sp_mtls_mtls']);

export interface Confirmation {
  /** RFC 9449 DPoP key thumbprint. */
  jkt?: string;
  /** RFC 8705 certificate thumbprint. */
  'x5t#S256'?: string;
}

function wantsCertificateBinding(client: Client): boolean {
  return client.tls_client_certificate_bound_access_tokens === true || (!!client.compliance_level && MTLS_BOUND_LEVELS.has(client.compliance_level));
}

/**
 * Whether every access token the client gets must be sender-constrained: with `require_proof_of_possession`,
 * certificate binding, or a FAPI 2.0 level. Such a client cannot take an access token in the authorization
 * response, where there is neither a proof nor a client certificate to bind it to.
 */
export function requiresSenderConstraint(client: Client): boolean {
  return client.require_proof_of_possession === true || wantsCertificateBinding(client) || fapi2Profile(client) !== undefined;
}

/** The thumbprint of the certificate a trusted edge forwarded with this request, if any (and valid). */
export function presentedCertificateThumbprint(request: FastifyRequest): string | undefined {
  const certificate = edgeCertificate(request, request.tenant);
  return certificate && certificateThumbprint(certificate.pem);
}

/** The certificate a token request's access token is bound to: only for clients that ask for it. */
export function certificateBinding(request: FastifyRequest, client: Client): string | undefined {
  if (!wantsCertificateBinding(client)) return undefined;
  const thumbprint = presentedCertificateThumbprint(request);
  if (!thumbprint) throw new InvalidRequest('The application requires certificate-bound access tokens: call the token endpoint over mutual TLS with a valid client certificate');
  return thumbprint;
}

/**
 * A client with `require_proof_of_possession` gets only sender-constrained tokens (DPoP or mTLS); a FAPI 2.0
 * client only tokens bound by its level's method (§5.3.2.1-4; the mTLS levels are held by certificateBinding).
 */
export function requireProofIfAsked(client: Client, proof: VerifiedProof | undefined, certificate: string | undefined): void {
  if (fapi2Profile(client)?.senderConstraint === 'dpop' && !proof) {
    throw new InvalidRequest(`FAPI 2.0 (${client.compliance_level}): tokens are DPoP-bound only; send a DPoP proof (RFC 9449)`);
  }
  if (client.require_proof_of_possession === true && !proof && !certificate) {
    throw new InvalidRequest('The application requires proof of possession: send a DPoP proof (RFC 9449) or call over mutual TLS (RFC 8705)');
  }
}

/**
 * The sender-constraint step every grant that issues tokens takes, right after client authentication and before
 * anything is spent (a code, a one-time code, an mfa_token, a password attempt): holds the client to what it
 * requires (certificateBinding, requireProofIfAsked) and answers what the tokens are bound to. The tokens are
 * bound to the proof and certificate of the request that issues them (RFC 9449 §5: a proof is never ignored).
 * The API's own requirement (requireProofForApi) is checked where the audience is known.
 */
export function senderConstraint(request: FastifyRequest, client: Client, proof: VerifiedProof | undefined): Confirmation {
  const certificate = certificateBinding(request, client);
  requireProofIfAsked(client, proof, certificate);
  return { ...(proof && { jkt: proof.jkt }), ...(certificate !== undefined && { 'x5t#S256': certificate }) };
}

/**
 * An API (resource server) with `proof_of_possession: { required: true }` (the reference's field) gets only
 * tokens bound by its `mechanism` (`dpop` or `mtls`; either when it names none).
 */
export async function requireProofForApi(services: Pick<Services, 'configCache'>, tenantId: string, audience: string | null, confirmation: Confirmation): Promise<void> {
  if (audience === null) return;
  const api = await services.configCache.resourceServer(tenantId, audience);
  const pop = api?.proof_of_possession as { mechanism?: unknown; required?: unknown } | null | undefined;
  if (pop?.required !== true) return;
  if (pop.mechanism === 'mtls') {
    if (confirmation['x5t#S256'] === undefined) throw new InvalidRequest('The API requires certificate-bound access tokens: call over mutual TLS (RFC 8705) as an application with tls_client_certificate_bound_access_tokens');
    return;
  }
  if (pop.mechanism === 'dpop' && confirmation.jkt === undefined) throw new InvalidRequest('The API requires DPoP-bound access tokens: send a DPoP proof (RFC 9449)');
  if (confirmation.jkt === undefined && confirmation['x5t#S256'] === undefined) throw new InvalidRequest('The API requires sender-constrained access tokens: send a DPoP proof (RFC 9449) or call over mutual TLS (RFC 8705)');
}

/** The `cnf` claim of an access token bound as `confirmation`, and how the token is typed in the response. */
export function binding(confirmation: Confirmation): { claims: { cnf?: Confirmation }; tokenType: 'Bearer' | 'DPoP' } {
  const cnf: Confirmation = {
    ...(confirmation.jkt !== undefined && { jkt: confirmation.jkt }),
    ...(confirmation['x5t#S256'] !== undefined && { 'x5t#S256': confirmation['x5t#S256'] }),
  };
  // An mTLS-bound token is still sent with the Bearer scheme (RFC 8705 §3); only DPoP changes the scheme.
  return { claims: Object.keys(cnf).length > 0 ? { cnf } : {}, tokenType: cnf.jkt !== undefined ? 'DPoP' : 'Bearer' };
}

/**
 * At a resource endpoint: why a certificate-bound token (`cnf["x5t#S256"]`) may not be used with this request
 * (no certificate, or another one), or undefined when it may (or is not certificate-bound).
 */
export function certificateMismatch(request: FastifyRequest, payload: JWTPayload): string | undefined {
  const bound = (payload.cnf as Confirmation | undefined)?.['x5t#S256'];
  if (bound === undefined) return undefined;
  const presented = presentedCertificateThumbprint(request);
  if (presented === undefined) return 'The access token is bound to a client certificate: call over mutual TLS with it';
  return presented === bound ? undefined : 'The access token is bound to another client certificate';
}

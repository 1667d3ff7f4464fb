/**
 * DPoP (RFC 9449) at this server's endpoints: reading the proof of a request (crypto/dpop.ts verifies it) and
 * answering a refusal in the endpoint's terms: 400 `invalid_dpop_proof` / `use_dpop_nonce` at the token and
 * PAR endpoints (§5, §8), 401 with a `WWW-Authenticate: DPoP` challenge at /userinfo (§7.1, §9). Every
 * `use_dpop_nonce` carries the nonce to use in `DPoP-Nonce`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { currentNonce, DPOP_ALGS, DpopProofError, verifyDpopProof, type VerifiedProof } from '../crypto/dpop.js';
import { ProtocolError } from '../http/errors.js';
import { addressedBaseUrl } from './mtls-alias.js';
import type { Services } from '../services.js';

export const DPOP_NONCE_HEADER = 'dpop-nonce';

function dependencies(services: Services) {
  return { sealer: services.sealer, counters: services.proofReplay };
}

/** 400 at the token and PAR endpoints. */
export class InvalidDpopProof extends ProtocolError {
  constructor(description: string, headers: Record<string, string> = {}) {
    super(400, 'invalid_dpop_proof', description, headers);
  }
}

function challenge(error: string, description: string): string {
  return `DPoP error="${error}", error_description="${description.replace(/["\\]/g, "'")}", algs="${DPOP_ALGS.join(' ')}"`;
}

/** 401 at resource endpoints (§7.1): the challenge names the DPoP scheme. */
export class DpopResourceError extends ProtocolError {
  constructor(error: 'invalid_dpop_proof' | 'use_dpop_nonce' | 'invalid_token', description: string, nonce?: string) {
    super(401, error, description, { 'www-authenticate': challenge(error, description), ...(nonce !== undefined && { [DPOP_NONCE_HEADER]: nonce }) });
  }
}

/**
 * The proof a token or PAR request carries, if any (`DPoP` header), for `path` on this tenant. Successful
 * answers carry a fresh `DPoP-Nonce` too, so the client keeps a current one.
 */
export async function proofAtEndpoint(services: Services, request: FastifyRequest, reply: FastifyReply, path: string): Promise<VerifiedProof | undefined> {
  const header = request.headers.dpop;
  if (header === undefined) return undefined;
  const tenant = request.tenant;
  const nonce = currentNonce(services.sealer, tenant.id);
  reply.header(DPOP_NONCE_HEADER, nonce);
  try {
    return await verifyDpopProof(dependencies(services), tenant.id, { header, method: request.method, url: `${addressedBaseUrl(request)}${path}` });
  } catch (error) {
    if (!(error instanceof DpopProofError)) throw error;
    if (error.reason === 'nonce') throw new ProtocolError(400, 'use_dpop_nonce', error.message, { [DPOP_NONCE_HEADER]: nonce });
    throw new InvalidDpopProof(error.message, { [DPOP_NONCE_HEADER]: nonce });
  }
}

/** The proof with an access token at a resource endpoint (/userinfo); refusals are 401 DPoP challenges. */
export async function proofAtResource(services: Services, request: FastifyRequest, path: string, accessToken: string): Promise<VerifiedProof> {
  const tenant = request.tenant;
  try {
    return await verifyDpopProof(dependencies(services), tenant.id, { header: request.headers.dpop, method: request.method, url: `${addressedBaseUrl(request)}${path}`, accessToken });
  } catch (error) {
    if (!(error instanceof DpopProofError)) throw error;
    const nonce = currentNonce(services.sealer, tenant.id);
    if (error.reason === 'nonce') throw new DpopResourceError('use_dpop_nonce', error.message, nonce);
    throw new DpopResourceError('invalid_dpop_proof', error.message, nonce);
  }
}

import type { FastifyRequest } from 'fastify';
import type { VerifiedProof } from '../../crypto/dpop.js';
import type { Services } from '../../services.js';

/** The successful token response (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  /** DPoP when the access token is bound to the proof's key (RFC 9449 §5). */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  scope?: string;
  id_token?: string;
  refresh_token?: string;
  /** The mfa-recovery-code grant: the user's next recovery code. */
  recovery_code?: string;
}

export interface GrantContext {
  request: FastifyRequest;
  params: Record<string, unknown>;
  services: Services;
  /** This endpoint's absolute URL, for assertion audiences. */
  endpointUrl: string;
  /** The request's verified DPoP proof, when it sent one: tokens are then bound to its key. */
  proof?: VerifiedProof;
}

/** One grant type: authenticates the client as the grant allows, then issues tokens. */
export type GrantHandler = (context: GrantContext) => Promise<TokenResponse>;

import type { FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';

/** The successful token response (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope?: string;
  id_token?: string;
  refresh_token?: string;
}

export interface GrantContext {
  request: FastifyRequest;
  params: Record<string, unknown>;
  services: Services;
  /** This endpoint's absolute URL, for assertion audiences. */
  endpointUrl: string;
}

/** One grant type: authenticates the client as the grant allows, then issues tokens. */
export type GrantHandler = (context: GrantContext) => Promise<TokenResponse>;

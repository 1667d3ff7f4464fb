/**
 * The authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1) as the checks leave it: every value single,
 * typed and validated. It is what a login transaction stores while the user is on the hosted pages.
 */
export type ResponseMode = 'query' | 'fragment' | 'form_post' | 'web_message';
export type Prompt = 'none' | 'login' | 'consent';

export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  /** Space-separated, in a canonical order: `code`, `id_token`, `token`. */
  responseType: string;
  responseMode: ResponseMode;
  /** As requested (space-separated); the scopes granted are resolved for the user at completion. */
  scope: string;
  audience?: string;
  state?: string;
  nonce?: string;
  codeChallenge?: string;
  codeChallengeMethod?: 'S256';
  prompt: Prompt[];
  /** Seconds. */
  maxAge?: number;
  /** `acr_values`, in the order asked; the multi-factor one asks for a second factor now (step-up). */
  acrValues?: string[];
  loginHint?: string;
  screenHint?: 'signup';
  connection?: string;
  /** RFC 9449 §10: the DPoP key a pushed request was bound to; the code is then redeemable with that key only. */
  dpopJkt?: string;
  /** Present when the sign-in answers a SAML AuthnRequest (or an IdP-initiated one): completed by auth-api/samlp. */
  saml?: SamlSignIn;
}

/** What a SAML sign-in needs to answer the service provider once the user is signed in. */
export interface SamlSignIn {
  /** The AuthnRequest's ID (absent when IdP-initiated): the response's InResponseTo. */
  requestId?: string;
  /** Where the Response is posted: the request's ACS URL, checked against the application's callbacks. */
  acsUrl: string;
  audience: string;
  relayState?: string;
  isPassive?: boolean;
}

import { InvalidRequest } from '../../http/errors.js';

/** The parameters as they arrived: one string per name (a repeated name is refused before this). */
export type RawParameters = Record<string, string>;

const MAX_PARAMETER_LENGTH = 4000;

/**
 * The front channel's parameters (/authorize, logout): one string per name; repeated (RFC 6749 §3.1),
 * non-string or over-long parameters are refused.
 */
export function readParameters(source: unknown): RawParameters {
  const params: RawParameters = {};
  if (!source || typeof source !== 'object') return params;
  for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
    if (typeof value !== 'string') throw new InvalidRequest(`Parameter ${name.slice(0, 50)} must be sent once`);
    if (value.length > MAX_PARAMETER_LENGTH) throw new InvalidRequest(`Parameter ${name.slice(0, 50)} is too long`);
    params[name] = value;
  }
  return params;
}

export const returnsCode = (r: Pick<AuthorizationRequest, 'responseType'>) => r.responseType.split(' ').includes('code');
export const returnsIdToken = (r: Pick<AuthorizationRequest, 'responseType'>) => r.responseType.split(' ').includes('id_token');
export const returnsAccessToken = (r: Pick<AuthorizationRequest, 'responseType'>) => r.responseType.split(' ').includes('token');

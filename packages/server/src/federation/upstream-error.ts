/**
 * What went wrong upstream, as the application will hear it: an OAuth error code and a description that says
 * what happened without repeating anything secret (no tokens, no client secret, no raw upstream bodies).
 */
import { ProtocolError } from '../http/errors.js';

export class UpstreamError extends ProtocolError {
  constructor(code: 'access_denied' | 'invalid_request' | 'server_error' | 'temporarily_unavailable', description: string) {
    super(400, code, description);
  }
}

/** The upstream answered the authorization request with an error (RFC 6749 §4.1.2.1). */
export function upstreamRefusal(error: string, description: string | undefined): UpstreamError {
  const said = description ? `: ${description.slice(0, 300)}` : '';
  return new UpstreamError('access_denied', `The identity provider refused the sign-in (${error.slice(0, 64)})${said}`);
}

/** Network failures and timeouts: the upstream could not be reached in time. */
export function isUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const names = ['AbortError', 'TimeoutError'];
  if (names.includes(error.name)) return true;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error && (names.includes(cause.name) || /ECONNREFUSED|ENOTFOUND|ECONNRESET|ETIMEDOUT|EAI_AGAIN/.test(String((cause as { code?: string }).code)))) return true;
  return error instanceof TypeError && error.message === 'fetch failed';
}

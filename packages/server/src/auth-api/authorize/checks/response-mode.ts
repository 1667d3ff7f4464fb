/**
 * `response_mode`: query (default for `code`), fragment (default when a token is returned), form_post, or
 * web_message. Decided leniently first so that later errors can be delivered in a mode the client reads.
 */
import { InvalidRequest } from '../../../http/errors.js';
import type { ResponseMode } from '../request.js';
import type { AuthorizeCheck } from './context.js';

const MODES: readonly ResponseMode[] = ['query', 'fragment', 'form_post', 'web_message'];

function defaultMode(responseType: string | undefined): ResponseMode {
  const types = (responseType ?? '').split(' ');
  return types.includes('token') || types.includes('id_token') ? 'fragment' : 'query';
}

export const checkResponseMode: AuthorizeCheck = (context) => {
  const asked = context.params.response_mode;
  const fallback = defaultMode(context.params.response_type);
  if (asked === undefined || asked === '') {
    context.request.responseMode = fallback;
    return;
  }
  if (!(MODES as readonly string[]).includes(asked)) {
    context.request.responseMode = fallback;
    throw new InvalidRequest(`Unsupported response_mode: ${asked.slice(0, 50)}`);
  }
  context.request.responseMode = asked as ResponseMode;
  // Tokens in a query string end up in logs and Referer headers (OAuth 2.0 Multiple Response Types §5).
  if (asked === 'query' && fallback === 'fragment') {
    context.request.responseMode = 'fragment';
    throw new InvalidRequest('response_mode=query is not allowed when tokens are returned');
  }
};

/** `scope` and `audience` are carried as asked; what the user may grant is resolved at completion. */
import { InvalidRequest } from '../../../http/errors.js';
import type { AuthorizeCheck } from './context.js';

export const checkScope: AuthorizeCheck = (context) => {
  const scope = (context.params.scope ?? '').trim().split(/\s+/).filter(Boolean);
  // An ID token implies openid: auth0-js sends checkSession and renewAuth without any scope, and the
  // reference service answers them, so openid is added rather than the request refused.
  if ((context.request.responseType ?? '').split(' ').includes('id_token') && !scope.includes('openid')) scope.unshift('openid');
  context.request.scope = [...new Set(scope)].join(' ');
  const audience = context.params.audience;
  if (audience !== undefined && audience !== '') context.request.audience = audience;
  for (const name of ['state', 'nonce', 'login_hint'] as const) {
    const value = context.params[name];
    if (value !== undefined && value.length > 2000) throw new InvalidRequest(`${name} is too long (2000 characters at most)`);
  }
  if (context.params.state !== undefined) context.request.state = context.params.state;
  if (context.params.login_hint) context.request.loginHint = context.params.login_hint;
  if (context.params.screen_hint === 'signup') context.request.screenHint = 'signup';
};

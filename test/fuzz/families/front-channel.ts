/**
 * The browser-facing routes: query strings at /authorize, logout, verify_redirect, /login/callback, /user/ssodata
 * and the client configuration script (/client/{id}.js, its id in the path fuzzed too), form
 * bodies at POST /authorize, /login/callback and the hosted pages, each with forged cookies. Their answers are
 * pages and redirects; errors are the error page or the family's JSON, never a 5xx.
 */
import fc from 'fast-check';
import { cookieHeader, field, formText, hostileText } from '../grammars/index.js';
import type { Family, FuzzContext, FuzzRequest } from './family.js';
import { runRequest } from './openapi-operations.js';

const AUTHORIZE = (context: FuzzContext): Record<string, fc.Arbitrary<string>> => ({
  client_id: field(context.clientId),
  redirect_uri: field('https://app.example/callback', 'https://evil.example/callback', 'javascript:alert(1)'),
  response_type: field('code', 'token', 'id_token', 'token id_token', 'code id_token', 'none'),
  response_mode: field('query', 'fragment', 'form_post', 'web_message'),
  scope: field('openid', 'openid profile email offline_access'),
  state: field(),
  nonce: field(),
  code_challenge: field('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'),
  code_challenge_method: field('S256', 'plain'),
  prompt: field('none', 'login', 'consent', 'login consent'),
  max_age: field('0', '60', '-1', '99999999999999999999'),
  audience: field(),
  connection: field('Username-Password-Authentication', 'email'),
  screen_hint: field('signup'),
  login_hint: field(),
  login_ticket: field(),
});

const GET_ROUTES = (context: FuzzContext): Record<string, Record<string, fc.Arbitrary<string>>> => ({
  '/authorize': AUTHORIZE(context),
  '/authorize/resume': { state: field() },
  '/v2/logout': { client_id: field(context.clientId), returnTo: field('https://app.example/', 'https://evil.example/'), federated: field('') },
  '/oidc/logout': { id_token_hint: field(), client_id: field(context.clientId), post_logout_redirect_uri: field('https://app.example/'), state: field() },
  '/passwordless/verify_redirect': { ...AUTHORIZE(context), token: field(), verification_code: field('123456'), email: field('fuzz@example.com') },
  '/u/login': { state: field() },
  '/u/login/federated': { state: field(), connection: field('Username-Password-Authentication', 'fuzz-oidc') },
  '/login/callback': CALLBACK,
  '/u/signup': { state: field() },
  '/u/consent': { state: field() },
  '/u/reset-password': { state: field() },
  '/u/reset-password/ticket': { ticket: field() },
  '/u/email-verification': { ticket: field() },
  '/u/unblock': { ticket: field() },
  '/user/ssodata': { client_id: field(context.clientId, 'nope'), ldaps: field('1') },
  [`/client/${context.clientId}.js`]: { t: field() },
});

/** /client/{id}.js with a hostile or unknown id in the path: a 404 in the OAuth shape, never a 5xx. */
const clientScript = (context: FuzzContext): fc.Arbitrary<FuzzRequest> =>
  fc.oneof(fc.constant(context.clientId), fc.constant('nope'), hostileText).map((id) => ({ method: 'GET', url: `/client/${encodeURIComponent(id)}.js`, headers: {} as Record<string, string> }));

/** An upstream identity provider's answer at /login/callback (federation). */
const CALLBACK: Record<string, fc.Arbitrary<string>> = {
  state: field(),
  code: field(),
  id_token: field('eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'),
  iss: field('http://127.0.0.1:9'),
  error: field('access_denied'),
  error_description: field(),
};

const FORMS: Record<string, Record<string, fc.Arbitrary<string>>> = {
  '/login/callback': CALLBACK,
  '/u/login': { transaction: field(), _csrf: field(), username: field('fuzz@example.com'), password: field() },
  '/u/signup': { transaction: field(), _csrf: field(), email: field('fuzz@example.com'), username: field(), password: field() },
  '/u/consent': { transaction: field(), _csrf: field(), decision: field('accept', 'deny') },
  '/u/reset-password': { transaction: field(), _csrf: field(), email: field('fuzz@example.com') },
  '/u/reset-password/ticket': { ticket: field(), password: field(), password_confirmation: field() },
  '/co/verify': { state: field(), verifier: field() },
};

export const frontChannel: Family<FuzzRequest> = {
  name: 'front-channel',
  summary: 'query strings (/authorize, logout, verify_redirect, /u/* links, /login/callback, /user/ssodata, /client/{id}.js and its path) and form bodies (POST /authorize, /u/*, /co/verify, /login/callback), forged cookies',
  arbitrary: (context) => {
    const gets = GET_ROUTES(context);
    const forms = { ...FORMS, '/authorize': AUTHORIZE(context) };
    const cookie = fc.option(cookieHeader, { nil: undefined, freq: 2 });
    const get = fc.tuple(fc.constantFrom(...Object.keys(gets)), cookie).chain(([path, c]) =>
      fc.oneof({ weight: 5, arbitrary: formText(gets[path]!) }, { weight: 1, arbitrary: hostileText.map(encodeURI) }).map((query) => ({
        method: 'GET',
        url: `${path}?${query}`,
        headers: c ? { cookie: c } : ({} as Record<string, string>),
      })),
    );
    const post = fc.tuple(fc.constantFrom(...Object.keys(forms)), cookie, fc.constantFrom('application/x-www-form-urlencoded', 'application/json')).chain(([path, c, type]) =>
      formText(forms[path as keyof typeof forms]!).map((body) => ({
        method: 'POST',
        url: path,
        headers: { 'content-type': type, ...(c ? { cookie: c } : {}) } as Record<string, string>,
        body: type === 'application/json' ? JSON.stringify(Object.fromEntries(new URLSearchParams(body))) : body,
      })),
    );
    return fc.oneof(get, post, clientScript(context));
  },
  run: runRequest,
};

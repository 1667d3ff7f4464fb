/**
 * The Authentication API's JSON and form endpoints (token, revocation, userinfo, cross-origin authentication,
 * passwordless): bodies generated from the document, and the same fields as form bodies from the grammar.
 */
import fc from 'fast-check';
import { field, formText } from '../grammars/index.js';
import type { Family, FuzzContext, FuzzRequest } from './family.js';
import { operationsOf, requestFor, runRequest, withRealValues } from './openapi-operations.js';

const JSON_ENDPOINTS = new Set(['/oauth/token', '/oauth/revoke', '/userinfo', '/co/authenticate', '/passwordless/start', '/passwordless/verify']);

const FORM_ENDPOINTS: Record<string, Record<string, fc.Arbitrary<string>>> = {
  '/oauth/token': {
    grant_type: field('client_credentials', 'authorization_code', 'refresh_token', 'password', 'http://auth0.com/oauth/grant-type/password-realm', 'http://auth0.com/oauth/grant-type/passwordless/otp'),
    client_id: field(),
    client_secret: field(),
    audience: field(),
    scope: field('openid', 'openid profile email offline_access'),
    code: field(),
    code_verifier: field(),
    redirect_uri: field('https://app.example/callback'),
    refresh_token: field(),
    username: field('fuzz@example.com'),
    password: field(),
    realm: field('Username-Password-Authentication', 'email'),
    client_assertion_type: field('urn:ietf:params:oauth:client-assertion-type:jwt-bearer'),
  },
  '/oauth/revoke': { token: field(), token_type_hint: field('refresh_token'), client_id: field(), client_secret: field() },
  '/passwordless/start': { client_id: field(), connection: field('email', 'sms'), email: field('fuzz@example.com'), phone_number: field('+15555550100'), send: field('code', 'link') },
};

function formRequests(context: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...Object.keys(FORM_ENDPOINTS)).chain((path) =>
    formText({ ...FORM_ENDPOINTS[path], ...(path !== '/oauth/revoke' && { client_id: field(context.clientId) }) }).map((body) => ({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    })),
  );
}

export const authentication: Family<FuzzRequest> = {
  name: 'authentication',
  summary: '/oauth/*, /userinfo, /co/authenticate, /passwordless/* from the document (JSON) and the form grammar',
  arbitrary: (context) => {
    const operations = operationsOf(context, (template) => JSON_ENDPOINTS.has(template));
    const headers = { origin: 'https://app.example' };
    const json = withRealValues(
      fc.constantFrom(...operations).chain((operation) => requestFor(context, operation, headers)),
      { client_id: context.clientId, realm: 'Username-Password-Authentication', connection: 'email' },
    );
    return fc.oneof({ weight: 2, arbitrary: json }, { weight: 1, arbitrary: formRequests(context) });
  },
  run: runRequest,
};

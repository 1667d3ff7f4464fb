/**
 * JWTs wherever one is accepted: bearer tokens at /userinfo and the Management API, id_token_hint at
 * /oidc/logout, client assertions at /oauth/token. None of the forged ones may be accepted: a 2xx to a forged
 * bearer token is a failure, as is any 5xx.
 */
import fc from 'fast-check';
import { jwtGrammar } from '../grammars/index.js';
import { send, type Family, type FuzzRequest } from './family.js';

const PROTECTED = ['/userinfo', '/api/v2/users', '/api/v2/clients', '/api/v2/tenants/settings', '/api/v2/roles'];

export const bearerTokens: Family<FuzzRequest & { forged: boolean }> = {
  name: 'bearer-tokens',
  summary: 'forged and malformed JWTs as bearer tokens (/userinfo, /api/v2), id_token_hint and client_assertion',
  arbitrary: (context) => {
    const token = jwtGrammar(context.jwt);
    const scheme = fc.constantFrom('Bearer ', 'bearer ', 'Bearer  ', 'Basic ', 'Bearer', 'DPoP ');
    const bearer = fc.tuple(fc.constantFrom(...PROTECTED), scheme, token).map(([path, s, t]) => ({ method: 'GET', url: path, headers: { authorization: `${s}${t}` }, forged: true }));
    const hint = token.map((t) => ({ method: 'GET', url: `/oidc/logout?id_token_hint=${encodeURIComponent(t)}`, forged: false }));
    const assertion = token.map((t) => ({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: context.clientId, client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: t, audience: context.target.managementAudience }),
      forged: true,
    }));
    return fc.oneof({ weight: 3, arbitrary: bearer }, { weight: 1, arbitrary: hint }, { weight: 1, arbitrary: assertion });
  },
  run: async (context, input) => {
    const { exchange, problems } = await send(context, input);
    if (input.forged && exchange.status < 300) problems.push(`${input.method} ${input.url}: a forged or malformed token was accepted (${exchange.status})`);
    return problems;
  },
};

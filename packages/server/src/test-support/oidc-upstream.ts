/**
 * A real upstream OpenID Provider for the federation tests: oidc-provider@9 (panva's certified OP) on a free
 * loopback port, with its development login screens (any login name and password sign in as that subject) and
 * consent given automatically. `signInUpstream` drives those screens over HTTP with the test browser.
 */
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { freePort } from './services.js';
import type { TestBrowser } from './sign-in.js';

export interface UpstreamClientRegistration {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: string;
  post_logout_redirect_uris?: string[];
  jwks?: { keys: Record<string, unknown>[] };
}

export interface OidcUpstream {
  issuer: string;
  discoveryUrl: string;
  close(): Promise<void>;
}

/** The claims every upstream account has, from its login name. */
export function upstreamClaims(sub: string): Record<string, unknown> {
  return { sub, email: `${sub}@upstream.example`, email_verified: true, name: `${sub} Upstream`, given_name: sub, family_name: 'Upstream', nickname: sub };
}

export async function startOidcUpstream(clients: UpstreamClientRegistration[]): Promise<OidcUpstream> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({ grant_types: ['authorization_code'], response_types: ['code'], ...c })),
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'upstream-1' }] },
    cookies: { keys: ['federation-test-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'given_name', 'family_name', 'nickname', 'picture'] },
    features: { devInteractions: { enabled: true } },
    // Explicit lifetimes (seconds), which also keeps oidc-provider from printing a notice for each default.
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => upstreamClaims(sub) }),
    // Consent is not what these tests are about: every client gets the scopes it asks for.
    loadExistingGrant: async (ctx: {
      oidc: {
        client: { clientId: string };
        session: { accountId: string; grantIdFor(id: string): string | undefined };
        params: { scope?: string };
        provider: { Grant: new (o: Record<string, unknown>) => { addOIDCScope(s: string): void; save(): Promise<string> } & Record<string, unknown> };
      };
    }) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope(ctx.oidc.params.scope ?? 'openid');
      await grant.save();
      return grant;
    },
  });
  const server: Server = createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    issuer,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Hidden fields and action of the upstream's form. */
function upstreamForm(page: string, base: string): { action: string; fields: Record<string, string> } {
  const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
  if (!action) throw new Error(`no form on the upstream page: ${page.slice(0, 200)}`);
  const fields: Record<string, string> = {};
  for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) fields[m[1]!] = m[2]!;
  return { action: new URL(action.replace(/&amp;/g, '&'), base).href, fields };
}

/**
 * From a redirect to the upstream, logs in there as `login` (or aborts, which answers `access_denied`) and
 * follows redirects until the browser is sent back to `returnTo` (the callback): resolves to that URL, unvisited.
 */
export async function signInUpstream(browser: TestBrowser, upstreamUrl: string, returnTo: string, login: string | { abort: true }): Promise<URL> {
  let url = upstreamUrl;
  for (let i = 0; i < 12; i++) {
    if (url.startsWith(returnTo)) return new URL(url);
    const response = await browser.get(url);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      url = new URL(location, url).href;
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) throw new Error(`upstream answered ${response.status}: ${page.slice(0, 300)}`);
    if (typeof login !== 'string') {
      const abort = /href="([^"]*\/abort)"/.exec(page)?.[1];
      if (!abort) throw new Error('no abort link on the upstream page');
      url = new URL(abort, url).href;
      continue;
    }
    const form = upstreamForm(page, url);
    const fields = /name="login"/.test(page) ? { ...form.fields, prompt: 'login', login, password: 'any' } : form.fields;
    const posted = await browser.post(form.action, fields);
    const next = posted.headers.get('location');
    if (!next) throw new Error(`upstream form answered ${posted.status}: ${(await posted.text()).slice(0, 300)}`);
    url = new URL(next, form.action).href;
  }
  throw new Error('too many steps at the upstream');
}

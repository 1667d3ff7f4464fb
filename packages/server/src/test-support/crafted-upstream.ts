/**
 * An upstream OpenID Provider whose ID tokens the test chooses, for the checks a conforming provider never gives
 * a reason to run: a wrong issuer or audience, a signature by a key not in its JWKS, an expired token, another
 * nonce. It is real HTTP (authorization, token and JWKS endpoints), signs with jose, and sends the browser straight
 * back (no login screen); the token endpoint records how the client authenticated.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { freePort } from './services.js';

export type IdTokenFlaw = 'none' | 'issuer' | 'audience' | 'signature' | 'expired' | 'nonce' | 'recently-expired';

export interface CraftedUpstream {
  issuer: string;
  /** What the next ID token gets wrong. */
  flaw: IdTokenFlaw;
  /** The subject of the next sign-in. */
  subject: string;
  /** The name the next ID token gives. */
  name: string;
  /** Every authorization request, and every token request's headers and form, as received. */
  readonly authorizations: URLSearchParams[];
  readonly tokenRequests: { authorization: string | undefined; form: URLSearchParams }[];
  /** The access token of the last token response. */
  lastAccessToken: string | undefined;
  close(): Promise<void>;
}

async function body(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return text;
}

function escape(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

export async function startCraftedUpstream(clientId: string): Promise<CraftedUpstream> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const other = await generateKeyPair('RS256');
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'upstream-key', alg: 'RS256', use: 'sig' }] };
  const nonces = new Map<string, string>();

  const upstream: CraftedUpstream = {
    issuer,
    flaw: 'none',
    subject: 'crafted-user',
    name: 'Crafted User',
    authorizations: [],
    tokenRequests: [],
    lastAccessToken: undefined,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  async function idToken(nonce: string): Promise<string> {
    const flaw = upstream.flaw;
    const now = Math.floor(Date.now() / 1000);
    const exp = flaw === 'expired' ? now - 600 : flaw === 'recently-expired' ? now - 20 : now + 300;
    const key: CryptoKey = flaw === 'signature' ? other.privateKey : privateKey;
    return new SignJWT({ nonce: flaw === 'nonce' ? 'another-nonce' : nonce, email: `${upstream.subject}@crafted.example`, email_verified: true, name: upstream.name })
      .setProtectedHeader({ alg: 'RS256', kid: 'upstream-key' })
      .setIssuer(flaw === 'issuer' ? 'https://impostor.example' : issuer)
      .setAudience(flaw === 'audience' ? 'someone-else' : clientId)
      .setSubject(upstream.subject)
      .setIssuedAt(exp - 300)
      .setExpirationTime(exp)
      .sign(key);
  }

  const server: Server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', issuer);
      if (url.pathname === '/jwks') return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
      if (url.pathname === '/authorize') {
        const q = url.searchParams;
        upstream.authorizations.push(q);
        const redirect = new URL(q.get('redirect_uri')!);
        if (q.get('response_type') === 'id_token') {
          const fields = { id_token: await idToken(q.get('nonce') ?? ''), state: q.get('state') ?? '' };
          const inputs = Object.entries(fields).map(([k, v]) => `<input type="hidden" name="${k}" value="${escape(v)}">`).join('');
          return response.writeHead(200, { 'content-type': 'text/html' }).end(`<form method="post" action="${escape(redirect.href)}">${inputs}</form>`);
        }
        const code = randomBytes(16).toString('hex');
        nonces.set(code, q.get('nonce') ?? '');
        redirect.searchParams.set('code', code);
        redirect.searchParams.set('state', q.get('state') ?? '');
        return response.writeHead(302, { location: redirect.href }).end();
      }
      if (url.pathname === '/token' && request.method === 'POST') {
        const form = new URLSearchParams(await body(request));
        upstream.tokenRequests.push({ authorization: request.headers.authorization, form });
        const nonce = nonces.get(form.get('code') ?? '');
        if (nonce === undefined) return response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant' }));
        nonces.delete(form.get('code')!);
        const tokens = { access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: 300, id_token: await idToken(nonce) };
        upstream.lastAccessToken = tokens.access_token;
        return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(tokens));
      }
      response.writeHead(404).end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return upstream;
}

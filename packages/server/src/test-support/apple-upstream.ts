/**
 * A local stand-in for Sign in with Apple (appleid.apple.com cannot be reached from the tests). Not oidc-provider:
 * two things Apple does cannot be had from it: its token endpoint takes as `client_secret` an ES256 JWT signed
 * by the team's key (`iss` the team, `sub` the Services ID, `aud` https://appleid.apple.com, header `kid`), where
 * oidc-provider's client_secret_jwt is an HMAC and its private_key_jwt wants `iss` = `sub` = client_id and itself
 * as audience; and Apple posts the name once, as a `user` form field next to the code, which oidc-provider's
 * form_post (not replaceable) cannot add. So this is a small server doing what Apple documents:
 * - `GET /auth/authorize`: `response_mode=form_post` required when `scope` has name or email; the person is named
 *   by the test (`stand_in_login`, or `stand_in_cancel` for Apple's `user_cancelled_authorize`); the first sign-in
 *   of a person to a Services ID gets `user` = `{"name":{"firstName","lastName"},"email"}`.
 * - `POST /auth/token`: the client secret JWT verified with the team key's public half (jose), the code once,
 *   its redirect_uri and PKCE verifier; an ID token (RS256, as Apple's keys are RSA) with Apple's claims, `email_verified` and
 *   `is_private_email` as the strings Apple sends.
 * - `GET /auth/keys`: the ID tokens' key.
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, exportJWK, generateKeyPair, importSPKI, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { UpstreamDriver } from '../federation/strategy-contract.js';
import type { TestBrowser } from './sign-in.js';

export interface AppleTeam {
  team_id: string;
  kid: string;
  client_id: string;
  /** The team's private key as Apple hands it out (.p8: PKCS#8 PEM, P-256). */
  app_secret: string;
  /** Its public half, which Apple keeps. */
  publicKeyPem: string;
}

export interface AppleStandIn {
  issuer: string;
  endpoints: { issuer: string; authorization_endpoint: string; token_endpoint: string; jwks_uri: string };
  /** Client secrets presented at the token endpoint, decoded (header and claims), and whether they verified. */
  clientSecrets: { secret: string; header: Record<string, unknown>; claims: JWTPayload; accepted: boolean }[];
  close(): Promise<void>;
}

export function appleTeam(client_id: string, team_id = 'TEAM123456', kid = 'KEY1234567'): AppleTeam {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256', privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  return { team_id, kid, client_id, app_secret: privateKey, publicKeyPem: publicKey };
}

const html = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function formPost(action: string, fields: Record<string, string>): string {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${html(name)}" value="${html(value)}">`)
    .join('');
  return `<!DOCTYPE html><html><body onload="document.forms[0].submit()"><form method="post" action="${html(action)}">${inputs}</form></body></html>`;
}

async function body(request: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString());
}

export async function startAppleStandIn(teams: AppleTeam[], redirectUris: string[]): Promise<AppleStandIn> {
  const { privateKey: signingKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'apple-stand-in', alg: 'RS256', use: 'sig' }] };
  const codes = new Map<string, { client_id: string; redirect_uri: string; sub: string; nonce?: string; challenge?: string }>();
  const named = new Set<string>();
  const clientSecrets: AppleStandIn['clientSecrets'] = [];
  let issuer = '';

  const server: Server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', issuer);
      const json = (status: number, value: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(value));
      };
      if (request.method === 'GET' && url.pathname === '/auth/keys') return json(200, jwks);
      if (request.method === 'GET' && url.pathname === '/auth/authorize') {
        const q = url.searchParams;
        const team = teams.find((t) => t.client_id === q.get('client_id'));
        const redirectUri = q.get('redirect_uri') ?? '';
        if (!team || !redirectUris.includes(redirectUri)) return json(400, { error: 'invalid_client' });
        const scopes = (q.get('scope') ?? '').split(' ');
        const wantsProfile = scopes.includes('name') || scopes.includes('email');
        if (wantsProfile && q.get('response_mode') !== 'form_post') return json(400, { error: 'invalid_request', error_description: 'response_mode must be form_post when name or email scope is requested' });
        if (q.get('response_type') !== 'code') return json(400, { error: 'unsupported_response_type' });
        const state = q.get('state') ?? '';
        let fields: Record<string, string>;
        const login = q.get('stand_in_login');
        if (q.get('stand_in_cancel') || !login) {
          fields = { error: 'user_cancelled_authorize', state };
        } else {
          const code = randomBytes(24).toString('base64url');
          codes.set(code, { client_id: team.client_id, redirect_uri: redirectUri, sub: login, ...(q.get('nonce') && { nonce: q.get('nonce')! }), ...(q.get('code_challenge') && { challenge: q.get('code_challenge')! }) });
          fields = { state, code };
          // Apple sends the name (and email) once: at the first sign-in of this person to this Services ID.
          const first = !named.has(`${team.client_id} ${login}`);
          if (first && scopes.includes('name')) {
            named.add(`${team.client_id} ${login}`);
            fields.user = JSON.stringify({ name: { firstName: login, lastName: 'Upstream' }, email: `${login}@upstream.example` });
          }
        }
        if (!wantsProfile) {
          const back = new URL(redirectUri);
          for (const [name, value] of Object.entries(fields)) back.searchParams.set(name, value);
          response.writeHead(302, { location: back.href });
          return response.end();
        }
        response.writeHead(200, { 'content-type': 'text/html' });
        return response.end(formPost(redirectUri, fields));
      }
      if (request.method === 'POST' && url.pathname === '/auth/token') {
        const form = await body(request);
        const team = teams.find((t) => t.client_id === form.get('client_id'));
        const secret = form.get('client_secret') ?? '';
        let accepted: boolean;
        let header: Record<string, unknown> = {};
        let claims: JWTPayload = {};
        try {
          header = decodeProtectedHeader(secret) as Record<string, unknown>;
          if (!team || header.kid !== team.kid) throw new Error('unknown key');
          ({ payload: claims } = await jwtVerify(secret, await importSPKI(team.publicKeyPem, 'ES256'), {
            algorithms: ['ES256'],
            issuer: team.team_id,
            subject: team.client_id,
            audience: 'https://appleid.apple.com',
            requiredClaims: ['iat', 'exp'],
          }));
          accepted = claims.exp! - claims.iat! <= 15_777_000;
        } catch {
          accepted = false;
        }
        clientSecrets.push({ secret, header, claims, accepted });
        if (!accepted) return json(400, { error: 'invalid_client' });
        const code = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier');
        if (
          form.get('grant_type') !== 'authorization_code' ||
          !code ||
          code.client_id !== team!.client_id ||
          code.redirect_uri !== form.get('redirect_uri') ||
          (code.challenge !== undefined && createHash('sha256').update(verifier ?? '').digest('base64url') !== code.challenge)
        ) {
          return json(400, { error: 'invalid_grant' });
        }
        const now = Math.floor(Date.now() / 1000);
        const idToken = await new SignJWT({
          email: `${code.sub}@upstream.example`,
          email_verified: 'true',
          is_private_email: 'false',
          auth_time: now,
          nonce_supported: true,
          ...(code.nonce && { nonce: code.nonce }),
        })
          .setProtectedHeader({ alg: 'RS256', kid: 'apple-stand-in' })
          .setIssuer(issuer)
          .setAudience(code.client_id)
          .setSubject(code.sub)
          .setIssuedAt(now)
          .setExpirationTime(now + 600)
          .sign(signingKey);
        return json(200, { access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: 3600, refresh_token: randomBytes(16).toString('hex'), id_token: idToken });
      }
      return json(404, { error: 'not_found' });
    })().catch(() => {
      response.statusCode = 500;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    endpoints: { issuer, authorization_endpoint: `${issuer}/auth/authorize`, token_endpoint: `${issuer}/auth/token`, jwks_uri: `${issuer}/auth/keys` },
    clientSecrets,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const unhtml = (value: string) => value.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The person signs in at the stand-in (or cancels); its form_post (or redirect) back, unvisited. */
export const APPLE_UPSTREAM: UpstreamDriver = {
  stateParameter: 'state',
  async signIn(browser: TestBrowser, upstreamUrl: string, _returnTo: string, login: string | { abort: true }) {
    const url = new URL(upstreamUrl);
    if (typeof login === 'string') url.searchParams.set('stand_in_login', login);
    else url.searchParams.set('stand_in_cancel', '1');
    const response = await browser.get(url.href);
    if (response.status === 302) return { url: new URL(response.headers.get('location')!) };
    const page = await response.text();
    if (response.status !== 200) throw new Error(`the Apple stand-in answered ${response.status}: ${page.slice(0, 300)}`);
    const action = unhtml(/<form method="post" action="([^"]+)"/.exec(page)![1]!);
    const form: Record<string, string> = {};
    for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) form[unhtml(m[1]!)] = unhtml(m[2]!);
    return { url: new URL(action), form };
  },
};

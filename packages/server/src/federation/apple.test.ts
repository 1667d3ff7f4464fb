/**
 * The `apple` preset (Sign in with Apple) against a local Apple stand-in (test-support/apple-upstream.ts, which
 * says why it is not oidc-provider): the strategy contract; the code by form_post with the name from the first
 * sign-in's `user` field, kept at later sign-ins that lack it; the client secret as the ES256 JWT Apple checks;
 * a key that is not the team's refused cleanly; options refused with 400s; Apple's documented endpoints by
 * default; development keys; and neither the key nor a client secret in responses or the server's log.
 */
import { generateKeyPairSync } from 'node:crypto';
import { Writable } from 'node:stream';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appleTeam, APPLE_UPSTREAM, startAppleStandIn, type AppleStandIn, type AppleTeam } from '../test-support/apple-upstream.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { createApp, management, TestBrowser, type TestApp } from '../test-support/sign-in.js';
import { APP_CALLBACK, federatedSignIn, redeem, runStrategyContract, type UpstreamCallback } from './strategy-contract.js';

const PKCE = { code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };

async function user(test: TestServer, userId: string): Promise<Record<string, unknown>> {
  const response = await management(test, 'GET', `/users/${encodeURIComponent(userId)}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !(await postgresAvailable()))(`apple (${dialect})`, () => {
    let test: TestServer;
    let app: TestApp;
    let apple: AppleStandIn;
    const log: string[] = [];
    const team: AppleTeam = appleTeam('com.example.gatehouse.web');
    const devTeam: AppleTeam = appleTeam('com.example.gatehouse.dev', 'DEVTEAM123', 'DEVKEY1234');
    const appleOptions = () => ({ client_id: team.client_id, team_id: team.team_id, kid: team.kid, app_secret: team.app_secret, ...apple.endpoints });

    beforeAll(async () => {
      test = await startTestServer({
        dialect,
        env: { GATEHOUSE_LOG_LEVEL: 'trace', GATEHOUSE_DEVELOPMENT_KEYS: JSON.stringify({ apple: { client_id: devTeam.client_id, team_id: devTeam.team_id, kid: devTeam.kid, app_secret: devTeam.app_secret } }) },
        logStream: new Writable({ write: (chunk: Buffer, _encoding, done) => (log.push(chunk.toString()), done()) }),
      });
      app = await createApp(test);
      apple = await startAppleStandIn([team, devTeam], [`${test.url}/login/callback`]);
    });
    afterAll(async () => {
      await apple?.close();
      await test?.close();
    });

    describe('the strategy contract', () =>
      runStrategyContract(
        {
          strategy: 'apple',
          upstream: APPLE_UPSTREAM,
          connection: 'apple',
          options: appleOptions,
          secrets: { app_secret: team.app_secret },
          refused: { options: () => ({ ...appleOptions(), app_secret: 'not a key' }), says: 'PEM' },
          userIdOf: (sub) => `apple|${sub}`,
          isSocial: true,
        },
        { test: () => test, app: () => app },
      ));

    it('keeps the name Apple sent once (the first sign-in\'s `user` field) at a later sign-in without it', async () => {
      const sub = '001234.5f8a9b0c1d2e3f40516273849a0b1c2d.1234';
      let first: UpstreamCallback | undefined;
      const result = await federatedSignIn(test, app, 'apple', {
        drive: async (upstreamUrl) => (first = await APPLE_UPSTREAM.signIn(new TestBrowser(), upstreamUrl, '', sub)),
      });
      // Apple answered by form_post with the code, the state, and (this once) the name.
      expect(first!.url.href).toBe(`${test.url}/login/callback`);
      expect(Object.keys(first!.form!).sort()).toEqual(['code', 'state', 'user']);
      const claims = decodeJwt(String((await redeem(test, app, result)).id_token));
      expect(claims.sub).toBe(`apple|${sub}`);
      expect(await user(test, `apple|${sub}`)).toMatchObject({ name: `${sub} Upstream`, given_name: sub, family_name: 'Upstream', email: `${sub}@upstream.example`, email_verified: true, logins_count: 1 });

      let second: UpstreamCallback | undefined;
      const again = await federatedSignIn(test, app, 'apple', {
        drive: async (upstreamUrl) => (second = await APPLE_UPSTREAM.signIn(new TestBrowser(), upstreamUrl, '', sub)),
      });
      expect(second!.form!.user).toBeUndefined();
      expect(again.done.searchParams.get('code')).toBeTruthy();
      expect(await user(test, `apple|${sub}`)).toMatchObject({ name: `${sub} Upstream`, given_name: sub, family_name: 'Upstream', logins_count: 2 });
    });

    it('ignores a `user` field that is not the JSON Apple sends, and signs in without a name', async () => {
      for (const [index, value] of ['not json', '{"name":"flat"}', JSON.stringify({ name: { firstName: 42, lastName: null } }), '[]', 'null'].entries()) {
        const sub = `bad-user-field-${index}`;
        const result = await federatedSignIn(test, app, 'apple', {
          drive: async (upstreamUrl) => {
            const callback = await APPLE_UPSTREAM.signIn(new TestBrowser(), upstreamUrl, '', sub);
            return { ...callback, form: { ...callback.form!, user: value } };
          },
        });
        expect(result.done.searchParams.get('code'), result.done.href).toBeTruthy();
        const stored = await user(test, `apple|${sub}`);
        expect(stored.given_name).toBeUndefined();
        expect(stored.email).toBe(`${sub}@upstream.example`);
      }
      // A field over the callback's parameter limit ends on the error page, before anything is trusted.
      const huge = await federatedSignIn(test, app, 'apple', {
        drive: async (upstreamUrl) => {
          const callback = await APPLE_UPSTREAM.signIn(new TestBrowser(), upstreamUrl, '', 'huge-user-field');
          return { ...callback, form: { ...callback.form!, user: JSON.stringify({ name: { firstName: 'x'.repeat(5000) } }) } };
        },
      }).catch((error: unknown) => error);
      expect(String(huge)).toContain("got 400: <!doctype html>");
    });

    it('authenticates at the token endpoint with an ES256 JWT from the team key, as Apple checks it', async () => {
      const presented = apple.clientSecrets.filter((s) => s.claims.sub === team.client_id);
      expect(presented.length).toBeGreaterThan(0);
      for (const { header, claims, accepted } of presented) {
        expect(accepted).toBe(true);
        expect(header).toEqual({ alg: 'ES256', kid: team.kid });
        expect(claims).toMatchObject({ iss: team.team_id, sub: team.client_id, aud: 'https://appleid.apple.com' });
        expect(claims.exp! - claims.iat!).toBeLessThanOrEqual(15_777_000);
        expect(claims.exp! * 1000).toBeGreaterThan(Date.now());
      }
    });

    it('a key that is not the team\'s is refused by Apple: the application gets access_denied, not a 500', async () => {
      const other = generateKeyPairSync('ec', { namedCurve: 'P-256', privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
      const created = await management(test, 'POST', '/connections', { name: 'apple-wrong-key', strategy: 'apple', options: { ...appleOptions(), app_secret: other.privateKey }, enabled_clients: [app.client_id] });
      expect(created.status, await created.clone().text()).toBe(201);
      const result = await federatedSignIn(test, app, 'apple-wrong-key', 'wrong-key-user', undefined, APPLE_UPSTREAM);
      expect(result.done.origin + result.done.pathname).toBe(APP_CALLBACK);
      expect(result.done.searchParams.get('error')).toBe('access_denied');
      expect(result.done.searchParams.get('error_description')).toContain('invalid_client');
      expect(result.done.searchParams.get('state')).toBe('app-state');
      expect(apple.clientSecrets.at(-1)!.accepted).toBe(false);
    });

    it('answers a form_post Apple did not make (the code by redirect) with invalid_request at the application', async () => {
      const result = await federatedSignIn(test, app, 'apple', {
        drive: async (upstreamUrl) => {
          const callback = await APPLE_UPSTREAM.signIn(new TestBrowser(), upstreamUrl, '', 'redirect-user');
          const url = new URL(callback.url);
          for (const [name, value] of Object.entries(callback.form!)) url.searchParams.set(name, value);
          return url;
        },
      });
      expect(result.done.searchParams.get('error')).toBe('invalid_request');
      expect(result.done.searchParams.get('error_description')).toContain('form_post');
    });

    it('refuses options it cannot use with a 400 in the Management API shape', async () => {
      const rsa = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
      const { team_id: _t, ...noTeam } = appleOptions();
      const { kid: _k, ...noKid } = appleOptions();
      const { app_secret: _s, ...noSecret } = appleOptions();
      const bad: [Record<string, unknown>, string][] = [
        [noTeam, 'missing: team_id'],
        [noKid, 'missing: kid'],
        [noSecret, 'missing: app_secret'],
        [{ ...appleOptions(), app_secret: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----' }, 'not a PEM private key'],
        [{ ...appleOptions(), app_secret: rsa.privateKey }, 'P-256'],
        [{ ...appleOptions(), scope: 'name profile' }, 'not profile'],
        [{ ...appleOptions(), token_endpoint: 'http://appleid.example/auth/token' }, 'https'],
        [{ ...appleOptions(), team_id: 42 }, 'team_id'],
        [{ ...appleOptions(), name: 'yes' }, 'name'],
      ];
      for (const [options, says] of bad) {
        const response = await management(test, 'POST', '/connections', { name: 'apple-refused', strategy: 'apple', options });
        const body = (await response.json()) as Record<string, unknown>;
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
        expect(String(body.message)).toContain(says);
        expect(JSON.stringify(body)).not.toContain('PRIVATE KEY');
      }
    });

    it("sends the browser to Apple's authorization endpoint, form_post, with name and email by default", async () => {
      const created = await management(test, 'POST', '/connections', { name: 'apple-defaults', strategy: 'apple', options: { client_id: 'com.example.defaults', team_id: team.team_id, kid: team.kid, app_secret: team.app_secret }, enabled_clients: [app.client_id] });
      expect(created.status, await created.clone().text()).toBe(201);
      expect(((await created.json()) as { options: Record<string, unknown> }).options.scope).toBe('name email');
      const start = await new TestBrowser().get(`${test.url}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: APP_CALLBACK, response_type: 'code', connection: 'apple-defaults', ...PKCE })}`);
      expect(start.status).toBe(302);
      const redirect = new URL(start.headers.get('location')!);
      expect(redirect.origin + redirect.pathname).toBe('https://appleid.apple.com/auth/authorize');
      expect(redirect.searchParams.get('client_id')).toBe('com.example.defaults');
      expect(redirect.searchParams.get('response_type')).toBe('code');
      expect(redirect.searchParams.get('response_mode')).toBe('form_post');
      expect(redirect.searchParams.get('scope')!.split(' ').sort()).toEqual(['email', 'name', 'openid']);
      expect(redirect.searchParams.get('redirect_uri')).toBe(`${test.url}/login/callback`);
      expect(redirect.searchParams.get('nonce')).toBeTruthy();

      // Without name and email, Apple answers by redirect: no form_post asked.
      const plain = await management(test, 'POST', '/connections', { name: 'apple-openid', strategy: 'apple', options: { ...appleOptions(), name: false, email: false }, enabled_clients: [app.client_id] });
      expect(plain.status).toBe(201);
      const result = await federatedSignIn(test, app, 'apple-openid', {
        drive: async (upstreamUrl) => {
          expect(new URL(upstreamUrl).searchParams.get('response_mode')).toBeNull();
          return APPLE_UPSTREAM.signIn(new TestBrowser(), upstreamUrl, '', 'openid-only');
        },
      });
      expect(result.done.searchParams.get('code')).toBeTruthy();
    });

    it("without keys of its own uses the server's development keys for Apple, and silent authentication through it answers login_required", async () => {
      const created = await management(test, 'POST', '/connections', { name: 'apple-dev-keys', strategy: 'apple', options: { ...apple.endpoints }, enabled_clients: [app.client_id] });
      expect(created.status, await created.clone().text()).toBe(201);
      const result = await federatedSignIn(test, app, 'apple-dev-keys', 'dev-keys-user', undefined, APPLE_UPSTREAM);
      expect(decodeJwt(String((await redeem(test, app, result)).id_token)).sub).toBe('apple|dev-keys-user');
      expect(apple.clientSecrets.at(-1)).toMatchObject({ accepted: true, claims: { iss: devTeam.team_id, sub: devTeam.client_id } });
      const silent = await result.browser.get(`${test.url}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: APP_CALLBACK, response_type: 'code', prompt: 'none', state: 's', ...PKCE })}`);
      const back = new URL(silent.headers.get('location')!);
      expect(back.searchParams.get('error')).toBe('login_required');
    });

    it('never shows or logs the team key or a client secret', async () => {
      const connections = await (await management(test, 'GET', '/connections?strategy=apple')).text();
      expect(connections).not.toContain('PRIVATE KEY');
      expect(connections).not.toContain('app_secret');
      const logs = await (await management(test, 'GET', '/logs?per_page=100')).text();
      const everything = [connections, logs, log.join('')];
      expect(apple.clientSecrets.length).toBeGreaterThan(0);
      for (const text of everything) {
        expect(text).not.toContain(team.app_secret.split('\n')[1]!);
        expect(text).not.toContain(devTeam.app_secret.split('\n')[1]!);
        for (const { secret } of apple.clientSecrets) expect(text).not.toContain(secret.split('.')[2]!);
      }
      expect(log.length).toBeGreaterThan(0);
    });
  });
}

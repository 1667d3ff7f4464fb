/**
 * Passkeys on the hosted pages, in real Chromium with its virtual authenticator (the DevTools WebAuthn domain,
 * which makes real credentials and signs real assertions), under the real CSP, with @simplewebauthn/browser
 * served from our origin: sign-up with a passkey, login with it, a cloned authenticator (its signature counter
 * behind) refused, user verification required, an assertion for another RP id refused, a passkey offered
 * after a password login, and the credentials in the Management API. One browser for the file; screenshots
 * go to /tmp/screens/passkey-*.png.
 */
import { createHash, createPrivateKey, randomBytes, sign } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../test-support/browser.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { createApp, createUser, management, type TestApp } from '../test-support/sign-in.js';

const SCREENS = '/tmp/screens';
const PASSWORD = 'correct horse battery staple 9';

interface Pkce {
  verifier: string;
  query: Record<string, string>;
}

interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId?: string;
  privateKey: string;
  userHandle?: string;
  signCount: number;
}

describe('Passkeys on the hosted pages (Chromium, virtual authenticator)', () => {
  let test: TestServer;
  let app: TestApp;
  let browser: BrowserSession;
  let appServer: Server;
  let callback = '';
  const email = `passkey${Date.now()}@example.com`;
  let userId = '';
  /** The passkey as the virtual authenticator held it after sign-up (for the clone). */
  let made: VirtualCredential;

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await management(test, method, path, body);
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  };

  function codeRequest(extra: Record<string, string> = {}): Pkce {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    return {
      verifier,
      query: { client_id: app.client_id, redirect_uri: callback, response_type: 'code', scope: 'openid email', code_challenge: challenge, code_challenge_method: 'S256', ...extra },
    };
  }

  async function exchange(page: Page, pkce: Pkce): Promise<Record<string, unknown>> {
    const code = new URL(page.url()).searchParams.get('code');
    expect(code, page.url()).toBeTruthy();
    const res = await fetch(`${test.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', client_id: app.client_id, code, redirect_uri: callback, code_verifier: pkce.verifier }),
    });
    expect(res.status).toBe(200);
    return decodeJwt(((await res.json()) as { id_token: string }).id_token);
  }

  /**
   * A page with a virtual authenticator of its own: by default this device's (platform, resident keys, user
   * verification); `securityKey`, a USB key without PIN or fingerprint (presence only).
   */
  async function pageWithAuthenticator(context: Parameters<typeof openPage>[1], options: { isUserVerified?: boolean; securityKey?: boolean } = {}) {
    const page = await openPage(browser, context);
    await page.context().clearCookies();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: options.securityKey
        ? { protocol: 'ctap2', transport: 'usb', hasResidentKey: false, hasUserVerification: false, automaticPresenceSimulation: true }
        : { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: options.isUserVerified ?? true, automaticPresenceSimulation: true },
    });
    return { page, cdp, authenticatorId };
  }

  const credentialsOf = async (cdp: CDPSession, authenticatorId: string) => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials as VirtualCredential[];
  const shot = (page: Page, name: string) => page.screenshot({ path: `${SCREENS}/passkey-${name}.png`, fullPage: true });
  const cspViolations = (page: Page) => {
    const seen: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) seen.push(message.text());
    });
    return seen;
  };

  async function toLoginPage(page: Page, pkce: Pkce) {
    await page.goto(`${test.url}/authorize?${new URLSearchParams(pkce.query)}`);
    await expect.poll(() => page.getByRole('button', { name: 'Log in with a passkey' }).count()).toBe(1);
  }

  beforeAll(async () => {
    mkdirSync(SCREENS, { recursive: true });
    appServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('app'));
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    callback = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}/callback`;
    test = await startTestServer();
    // WebAuthn needs a domain as its RP id (never an IP address): the test server's base URL is on localhost.
    expect(new URL(test.url).hostname).toBe('localhost');
    app = await createApp(test, { callbacks: [callback] });
    const connections = (await api('GET', '/connections')).body as { id: string; name: string; options: Record<string, unknown> }[];
    const database = connections.find((c) => c.name === 'Username-Password-Authentication')!;
    const patched = await api('PATCH', `/connections/${database.id}`, { options: { ...database.options, authentication_methods: { password: { enabled: true }, passkey: { enabled: true } } } });
    expect(patched.status).toBe(200);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await test?.close();
    await new Promise((resolve) => appServer?.close(resolve));
  });

  it('signs up with a passkey (no password), then lists it in the Management API in the reference shape', async (context) => {
    const { page, cdp, authenticatorId } = await pageWithAuthenticator(context);
    const violations = cspViolations(page);
    const pkce = codeRequest({ screen_hint: 'signup' });
    await page.goto(`${test.url}/authorize?${new URLSearchParams(pkce.query)}`);
    await page.getByLabel('Email address').fill(email);
    await page.getByRole('button', { name: 'Sign up with a passkey' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Create your passkey' }).count()).toBe(1);
    await shot(page, 'signup');
    const landing = page.waitForURL((url) => url.href.startsWith(callback));
    await page.getByRole('button', { name: 'Create a passkey' }).click();
    await landing;
    const claims = await exchange(page, pkce);
    userId = claims.sub as string;
    expect(claims).toMatchObject({ email, amr: ['hwk', 'mfa'] });
    expect(violations).toEqual([]);

    const held = await credentialsOf(cdp, authenticatorId);
    expect(held).toHaveLength(1);
    made = held[0]!;
    expect(made).toMatchObject({ isResidentCredential: true, rpId: 'localhost' });

    const methods = (await api('GET', `/users/${encodeURIComponent(userId)}/authentication-methods`)).body as Record<string, unknown>[];
    expect(methods).toHaveLength(1);
    expect(methods[0]).toMatchObject({
      type: 'passkey',
      confirmed: true,
      key_id: Buffer.from(made.credentialId, 'base64').toString('base64url'),
      relying_party_identifier: 'localhost',
      credential_device_type: 'single_device',
      credential_backed_up: false,
      user_handle: Buffer.from(made.userHandle!, 'base64').toString('base64url'),
    });
    expect(methods[0]!.id).toMatch(/^passkey\|dev_[A-Za-z0-9]{16}$/);
    expect(typeof methods[0]!.public_key).toBe('string');
    // No password: the account has none to guess.
    const user = (await api('GET', `/users/${encodeURIComponent(userId)}`)).body as Record<string, unknown>;
    expect(user.email).toBe(email);
    await page.close();
  });

  it('logs in with the passkey from the username field\'s autofill (conditional UI), and refuses a cloned authenticator whose counter is behind', async (context) => {
    const { page, cdp, authenticatorId } = await pageWithAuthenticator(context);
    await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: made });
    // The page offers passkeys in the autofill; the virtual authenticator, present and verifying, takes it.
    const pkce = codeRequest();
    const landing = page.waitForURL((url) => url.href.startsWith(callback));
    await page.goto(`${test.url}/authorize?${new URLSearchParams(pkce.query)}`);
    await landing;
    expect(await exchange(page, pkce)).toMatchObject({ sub: userId, amr: ['hwk', 'mfa'] });
    const after = (await credentialsOf(cdp, authenticatorId))[0]!;
    expect(after.signCount).toBeGreaterThan(made.signCount);

    // A clone: the same key, its counter where it was at sign-up (behind the one the server has seen).
    const clone = await pageWithAuthenticator(context);
    await clone.cdp.send('WebAuthn.addCredential', { authenticatorId: clone.authenticatorId, credential: made });
    await clone.page.goto(`${test.url}/authorize?${new URLSearchParams(codeRequest().query)}`);
    await expect.poll(() => clone.page.getByRole('alert').first().textContent()).toContain('That passkey could not sign you in');
    expect(new URL(clone.page.url()).pathname).toBe('/u/login');
    await shot(clone.page, 'clone-refused');
    // The genuine authenticator still works (its counter moves on).
    const again = codeRequest();
    await page.context().clearCookies();
    await page.goto('about:blank');
    const back = page.waitForURL((url) => url.href.startsWith(callback));
    await page.goto(`${test.url}/authorize?${new URLSearchParams(again.query)}`);
    await back;
    expect(await exchange(page, again)).toMatchObject({ sub: userId });
    made = (await credentialsOf(cdp, authenticatorId))[0]!;
    await clone.page.close();
    await page.close();
  });

  it('requires user verification: an assertion without it is refused', async (context) => {
    // An authenticator that cannot verify the user (no fingerprint, no PIN), holding the real key.
    const { page, cdp, authenticatorId } = await pageWithAuthenticator(context, { isUserVerified: false });
    await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: made });
    await toLoginPage(page, codeRequest());
    // The page asks for verification, which this authenticator cannot give: the browser itself gives up.
    await page.getByRole('button', { name: 'Log in with a passkey' }).click();
    await expect.poll(() => page.locator('#webauthn-status').isVisible()).toBe(true);
    // A page that did not ask for it (userVerification: discouraged) gets an assertion without the UV flag
    // from the browser; the server, which requires it for passkeys, refuses that.
    // (Run in the page, as a string: this file is compiled without the DOM's types.)
    await page.evaluate(`(async () => {
      const options = JSON.parse(document.getElementById('webauthn-options').textContent);
      const answer = await window.SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: { ...options, userVerification: 'discouraged' } });
      const form = document.querySelector('form[data-webauthn]');
      form.querySelector('input[name="webauthn_response"]').value = JSON.stringify(answer);
      HTMLFormElement.prototype.submit.call(form);
    })()`);
    await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('That passkey could not sign you in');
    made = (await credentialsOf(cdp, authenticatorId))[0]!;
    await page.close();
  });

  it('refuses an assertion signed by the right key for another RP id, and takes the same one made for ours', async (context) => {
    const { page } = await pageWithAuthenticator(context);
    const key = createPrivateKey({ key: Buffer.from(made.privateKey, 'base64'), format: 'der', type: 'pkcs8' });
    const credentialId = Buffer.from(made.credentialId, 'base64').toString('base64url');
    let counter = made.signCount + 10;
    /** An assertion as an authenticator makes one, signed with the passkey's own private key. */
    const assertion = (rpId: string, challenge: string) => {
      const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin: new URL(test.url).origin, crossOrigin: false }));
      const count = Buffer.alloc(4);
      count.writeUInt32BE(++counter);
      // User present and verified.
      const authenticatorData = Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([0x05]), count]);
      const signature = sign('sha256', Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJSON).digest()]), key);
      return JSON.stringify({
        id: credentialId,
        rawId: credentialId,
        type: 'public-key',
        response: {
          clientDataJSON: clientDataJSON.toString('base64url'),
          authenticatorData: authenticatorData.toString('base64url'),
          signature: signature.toString('base64url'),
          userHandle: Buffer.from(made.userHandle!, 'base64').toString('base64url'),
        },
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
      });
    };
    const answerWith = async (rpId: string) => {
      const challenge = (await page.evaluate(`JSON.parse(document.getElementById('webauthn-options').textContent).challenge`)) as string;
      const answer = assertion(rpId, challenge);
      await page.evaluate(`(() => {
        const form = document.querySelector('form[data-webauthn]');
        form.querySelector('input[name="webauthn_response"]').value = ${JSON.stringify(answer)};
        HTMLFormElement.prototype.submit.call(form);
      })()`);
    };

    await toLoginPage(page, codeRequest());
    await answerWith('evil.example');
    await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('That passkey could not sign you in');

    // The same construction for our RP id signs in: the refusal above was for the RP id alone.
    const pkce = codeRequest();
    await toLoginPage(page, pkce);
    const landing = page.waitForURL((url) => url.href.startsWith(callback));
    await answerWith('localhost');
    await landing;
    expect(await exchange(page, pkce)).toMatchObject({ sub: userId });
    await page.close();
  });

  it('offers a passkey after a password login, and adds it', async (context) => {
    const password = `pw${Date.now()}@example.com`;
    const user = await createUser(test, password, PASSWORD);
    const { page, cdp, authenticatorId } = await pageWithAuthenticator(context);
    const pkce = codeRequest();
    await toLoginPage(page, pkce);
    await shot(page, 'login');
    await page.getByLabel('Email address').fill(password);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Log in faster with a passkey' }).count()).toBe(1);
    await shot(page, 'offer');
    const landing = page.waitForURL((url) => url.href.startsWith(callback));
    await page.getByRole('button', { name: 'Create a passkey' }).click();
    await landing;
    expect(await exchange(page, pkce)).toMatchObject({ sub: user.user_id, amr: ['pwd'] });
    expect(await credentialsOf(cdp, authenticatorId)).toHaveLength(1);
    const methods = (await api('GET', `/users/${encodeURIComponent(user.user_id)}/authentication-methods`)).body as { id: string; type: string }[];
    expect(methods.map((m) => m.type)).toEqual(['passkey']);

    // Deletable: once deleted, the passkey no longer signs in.
    expect((await api('DELETE', `/users/${encodeURIComponent(user.user_id)}/authentication-methods/${encodeURIComponent(methods[0]!.id)}`)).status).toBe(204);
    await page.context().clearCookies();
    // The browser still holds it and offers it in the autofill; the server no longer knows it.
    await page.goto(`${test.url}/authorize?${new URLSearchParams(codeRequest().query)}`);
    await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('That passkey could not sign you in');
    await page.close();
  });

  it('enrolls a security key as the second factor after the password, asks for it at the next login (amr pwd+hwk+mfa), and takes the recovery code without it', async (context) => {
    const who = `mfa${Date.now()}@example.com`;
    const user = await createUser(test, who, PASSWORD);
    expect((await api('PUT', '/guardian/factors/webauthn-roaming', { enabled: true })).status).toBe(200);
    expect((await api('PUT', '/guardian/factors/recovery-code', { enabled: true })).status).toBe(200);
    expect((await api('PUT', '/guardian/policies', ['all-applications'])).status).toBe(200);
    try {
      const { page, cdp, authenticatorId } = await pageWithAuthenticator(context, { securityKey: true });
      const violations = cspViolations(page);
      const passwordStep = async (pkce: Pkce) => {
        await toLoginPage(page, pkce);
        await page.getByLabel('Email address').fill(who);
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Continue' }).click();
      };
      const first = codeRequest();
      await passwordStep(first);
      await expect.poll(() => page.getByRole('button', { name: 'Register a security key' }).count()).toBe(1);
      expect(new URL(page.url()).pathname).toBe('/u/mfa');
      await shot(page, 'mfa-enroll');
      await page.getByRole('button', { name: 'Register a security key' }).click();
      await expect.poll(() => page.getByRole('heading', { name: 'Save your recovery code' }).count()).toBe(1);
      const recoveryCode = (await page.locator('#recovery-code').textContent())!.trim();
      const landing = page.waitForURL((url) => url.href.startsWith(callback));
      await page.getByRole('button', { name: 'I have saved it, continue' }).click();
      await landing;
      expect(await exchange(page, first)).toMatchObject({ sub: user.user_id, amr: ['pwd', 'hwk', 'mfa'] });
      expect(await credentialsOf(cdp, authenticatorId)).toHaveLength(1);
      const methods = (await api('GET', `/users/${encodeURIComponent(user.user_id)}/authentication-methods`)).body as { type: string; id: string }[];
      expect(methods.map((m) => m.type).sort()).toEqual(['recovery-code', 'webauthn-roaming']);
      expect(methods.find((m) => m.type === 'webauthn-roaming')!.id).toMatch(/^webauthn-roaming\|dev_/);
      const enrollments = (await api('GET', `/users/${encodeURIComponent(user.user_id)}/enrollments`)).body as Record<string, unknown>[];
      expect(enrollments).toEqual([expect.objectContaining({ status: 'confirmed', type: 'webauthn-roaming', auth_method: 'webauthn-roaming' })]);

      // The next login asks for the key (presence is enough for a security key as a second factor).
      await page.context().clearCookies();
      await page.goto('about:blank');
      const second = codeRequest();
      await passwordStep(second);
      await expect.poll(() => page.getByRole('button', { name: 'Use security key or device' }).count()).toBe(1);
      await shot(page, 'mfa-challenge');
      const back = page.waitForURL((url) => url.href.startsWith(callback));
      await page.getByRole('button', { name: 'Use security key or device' }).click();
      await back;
      expect(await exchange(page, second)).toMatchObject({ sub: user.user_id, amr: ['pwd', 'hwk', 'mfa'] });
      expect(violations).toEqual([]);

      // Without the key (another browser, another authenticator), the step cannot be passed with it; the
      // recovery code stands in for it.
      const other = await pageWithAuthenticator(context, { securityKey: true });
      const lost = codeRequest();
      await other.page.goto(`${test.url}/authorize?${new URLSearchParams(lost.query)}`);
      await other.page.getByLabel('Email address').fill(who);
      await other.page.getByLabel('Password').fill(PASSWORD);
      await other.page.getByRole('button', { name: 'Continue' }).click();
      await other.page.getByRole('button', { name: 'Use security key or device' }).click();
      await expect.poll(() => other.page.locator('#webauthn-status').isVisible()).toBe(true);
      expect(new URL(other.page.url()).pathname).toBe('/u/mfa');
      await other.page.getByRole('link', { name: 'Use your recovery code' }).click();
      await other.page.getByLabel('Recovery code').fill(recoveryCode);
      await other.page.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => other.page.getByRole('heading', { name: 'Save your recovery code' }).count()).toBe(1);
      const recovered = other.page.waitForURL((url) => url.href.startsWith(callback));
      await other.page.getByRole('button', { name: 'I have saved it, continue' }).click();
      await recovered;
      expect(await exchange(other.page, lost)).toMatchObject({ sub: user.user_id, amr: ['pwd', 'mfa'] });
      await other.page.close();
      await page.close();
    } finally {
      await api('PUT', '/guardian/policies', []);
    }
  });
});

/**
 * Federated logout toward SAML identity providers: `/v2/logout?federated` after a samlp sign-in sends the browser
 * to the IdP's SingleLogoutService with a LogoutRequest naming the assertion's NameID and SessionIndex (signed when
 * the connection signs its requests; samlify verifies it from our metadata), and the IdP's LogoutResponse at
 * /logout (HTTP-POST or HTTP-Redirect, signed by samlify) sends the browser on to returnTo. Refused: a response to
 * another request, one signed by another key, a replay, an unknown RelayState; not offered: IdP-initiated logout.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { DOMParser } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSamlUpstream, type SamlUpstream } from '../test-support/saml-upstream.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { createApp, management, readForm, type TestBrowser, type TestApp } from '../test-support/sign-in.js';
import { APP_CALLBACK, federatedSignIn } from './strategy-contract.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const RETURN_TO = 'https://app.example/';
const SAML_ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion';
const SAML_PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !(await postgresAvailable()))(`samlp: federated logout toward the IdP (${dialect})`, () => {
    let test: TestServer;
    let app: TestApp;
    /** Takes unsigned requests; its LogoutResponses go by HTTP-POST, signed. */
    let idp: SamlUpstream;
    /** Wants signed requests (LogoutRequests too); its LogoutResponses go by HTTP-Redirect, signed in the query. */
    let signedIdp: SamlUpstream;

    async function createConnection(name: string, upstream: SamlUpstream, options: Record<string, unknown> = {}) {
      const response = await management(test, 'POST', '/connections', {
        name,
        strategy: 'samlp',
        options: { signInEndpoint: upstream.ssoUrl, signOutEndpoint: upstream.sloUrl, signingCert: b64(upstream.certificatePem), ...options },
        enabled_clients: [app.client_id],
      });
      expect(response.status, await response.clone().text()).toBe(201);
    }

    async function metadataOf(name: string): Promise<string> {
      return (await fetch(`${test.url}/samlp/metadata?connection=${encodeURIComponent(name)}`)).text();
    }

    /** Signs `login` in through the connection (the IdP trusting its metadata); the browser with our session. */
    async function signIn(upstream: SamlUpstream, connection: string, login: string, trust: Parameters<SamlUpstream['trust']>[1] = {}): Promise<TestBrowser> {
      upstream.trust(await metadataOf(connection), trust);
      const result = await federatedSignIn(test, app, connection, login, undefined, upstream.driver);
      expect(result.done.searchParams.get('code'), result.done.href).toBeTruthy();
      return result.browser;
    }

    function logout(browser: TestBrowser): Promise<Response> {
      return browser.get(`${test.url}/v2/logout?federated&client_id=${app.client_id}&returnTo=${encodeURIComponent(RETURN_TO)}`);
    }

    /** Follows the LogoutRequest to the IdP; returns its answer to us (a form to post, or a redirect), not yet sent. */
    async function atIdp(browser: TestBrowser, location: string): Promise<{ url: string; form?: Record<string, string> }> {
      const answer = await browser.get(location);
      if (answer.status === 302) return { url: answer.headers.get('location')! };
      expect(answer.status, await answer.clone().text()).toBe(200);
      const form = readForm(await answer.text(), location);
      return { url: form.action, form: form.fields };
    }

    const deliver = (browser: TestBrowser, back: { url: string; form?: Record<string, string> }) => (back.form ? browser.post(back.url, back.form) : browser.get(back.url));

    beforeAll(async () => {
      test = await startTestServer({ dialect });
      app = await createApp(test);
      [idp, signedIdp] = await Promise.all([startSamlUpstream(), startSamlUpstream({ wantAuthnRequestsSigned: true })]);
      await createConnection('slo-post', idp);
      await createConnection('slo-signed-redirect', signedIdp, { signSAMLRequest: true });
      await createConnection('slo-disabled', idp, { disableSignout: true });
    });
    afterAll(async () => {
      await Promise.all([idp?.close(), signedIdp?.close()]);
      await test?.close();
    });

    it('names /logout as the SingleLogoutService in the SP metadata of a connection that signs out, not of one with disableSignout', async () => {
      expect(await metadataOf('slo-post')).toMatch(new RegExp(`SingleLogoutService[^>]*Location="${test.url}/logout"`));
      expect(await metadataOf('slo-disabled')).not.toContain('SingleLogoutService');
    });

    it('sends a LogoutRequest with the NameID and SessionIndex of the assertion, and continues to returnTo on the IdP\'s signed HTTP-POST LogoutResponse', async () => {
      const browser = await signIn(idp, 'slo-post', 'slo-user');
      const out = await logout(browser);
      expect(out.status).toBe(302);
      const location = new URL(out.headers.get('location')!);
      expect(location.origin + location.pathname).toBe(idp.sloUrl);
      const request = new DOMParser().parseFromString(inflateRawSync(Buffer.from(location.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8'), 'text/xml').documentElement!;
      expect(request.localName).toBe('LogoutRequest');
      expect(request.getAttribute('Destination')).toBe(idp.sloUrl);
      expect(request.getElementsByTagNameNS(SAML_ASSERTION, 'NameID').item(0)?.textContent).toBe('slo-user');
      expect(request.getElementsByTagNameNS(SAML_ASSERTION, 'NameID').item(0)?.getAttribute('Format')).toBe('urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified');
      expect(request.getElementsByTagNameNS(SAML_PROTOCOL, 'SessionIndex').item(0)?.textContent).toBe(idp.sessionIndexes.get('slo-user'));
      expect(location.searchParams.get('Signature')).toBeNull();

      const back = await atIdp(browser, location.href);
      expect(idp.logoutRequests.at(-1)).toMatchObject({ id: request.getAttribute('ID'), nameId: 'slo-user', signed: false });
      expect(back.url).toBe(`${test.url}/logout`);
      expect(Buffer.from(back.form!.SAMLResponse!, 'base64').toString('utf8')).toContain('SignatureValue');
      const done = await deliver(browser, back);
      expect(done.status, await done.clone().text()).toBe(303);
      expect(done.headers.get('location')).toBe(RETURN_TO);

      // Answered once: the same LogoutResponse again is refused, and our session is gone.
      const replay = await deliver(browser, back);
      expect(replay.status).toBe(400);
      expect(await replay.text()).toContain('unknown, expired or was already used');
      const silent = await browser.get(`${test.url}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: APP_CALLBACK, response_type: 'code', prompt: 'none', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`);
      expect(new URL(silent.headers.get('location')!).searchParams.get('error')).toBe('login_required');
    });

    it('signs the LogoutRequest with the tenant key when the connection signs its requests (samlify verifies it), and takes a LogoutResponse signed in the HTTP-Redirect query', async () => {
      const browser = await signIn(signedIdp, 'slo-signed-redirect', 'signed-slo-user', { logoutBinding: 'redirect' });
      const out = await logout(browser);
      const location = new URL(out.headers.get('location')!);
      expect(location.searchParams.get('Signature')).toBeTruthy();
      expect(location.searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
      const back = await atIdp(browser, location.href);
      expect(signedIdp.logoutRequests.at(-1)).toMatchObject({ nameId: 'signed-slo-user', signed: true });
      const answer = new URL(back.url);
      expect(answer.origin + answer.pathname).toBe(`${test.url}/logout`);
      expect(answer.searchParams.get('Signature')).toBeTruthy();
      const done = await deliver(browser, back);
      expect(done.status, await done.clone().text()).toBe(302);
      expect(done.headers.get('location')).toBe(RETURN_TO);

      // The same query with its signature broken: refused.
      const browser2 = await signIn(signedIdp, 'slo-signed-redirect', 'signed-slo-user', { logoutBinding: 'redirect' });
      const back2 = await atIdp(browser2, (await logout(browser2)).headers.get('location')!);
      const broken = new URL(back2.url);
      const signature = broken.searchParams.get('Signature')!;
      broken.searchParams.set('Signature', `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`);
      const refused = await browser2.get(broken.href);
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain('signature');
    });

    it('refuses a LogoutResponse to another request or signed by another key, and continues (logged) when the IdP answers with a failure status', async () => {
      for (const [tweak, says] of [
        [{ inResponseTo: '_another-request' }, 'InResponseTo'],
        [{ signer: 'rogue' as const }, 'signature'],
      ] as const) {
        const browser = await signIn(idp, 'slo-post', 'refused-slo-user');
        idp.nextLogout = tweak;
        const back = await atIdp(browser, (await logout(browser)).headers.get('location')!);
        const refused = await deliver(browser, back);
        expect(refused.status).toBe(400);
        const page = await refused.text();
        expect(page).toContain(says);
        expect(refused.headers.get('location')).toBeNull();
      }
      const browser = await signIn(idp, 'slo-post', 'failed-slo-user');
      idp.nextLogout = { status: 'urn:oasis:names:tc:SAML:2.0:status:Responder' };
      const back = await atIdp(browser, (await logout(browser)).headers.get('location')!);
      const done = await deliver(browser, back);
      expect(done.status).toBe(303);
      expect(done.headers.get('location')).toBe(RETURN_TO);
    });

    it('leaves the logout local with disableSignout, and without ?federated', async () => {
      const browser = await signIn(idp, 'slo-disabled', 'local-slo-user');
      const out = await logout(browser);
      expect(out.status).toBe(302);
      expect(out.headers.get('location')).toBe(RETURN_TO);
      const other = await signIn(idp, 'slo-post', 'not-federated-user');
      const plain = await other.get(`${test.url}/v2/logout?client_id=${app.client_id}&returnTo=${encodeURIComponent(RETURN_TO)}`);
      expect(plain.headers.get('location')).toBe(RETURN_TO);
    });

    it('answers what is not a LogoutResponse of ours with the error page: IdP-initiated logout 501, unknown RelayState, bad input 400', async () => {
      const logoutRequest = b64('<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_x" Version="2.0" IssueInstant="2026-01-01T00:00:00Z"/>');
      const idpInitiated = await fetch(`${test.url}/logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ SAMLRequest: logoutRequest }).toString() });
      expect(idpInitiated.status).toBe(501);
      expect(await idpInitiated.json()).toMatchObject({ error: 'not_offered' });
      const response = deflateRawSync(Buffer.from('<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_y" Version="2.0" InResponseTo="_z"/>')).toString('base64');
      for (const query of [
        `SAMLResponse=${encodeURIComponent(response)}&RelayState=${'a'.repeat(43)}`,
        `SAMLResponse=${encodeURIComponent(response)}`,
        'RelayState=x',
        `SAMLResponse=%%%&RelayState=${'a'.repeat(43)}`,
      ]) {
        const answer = await fetch(`${test.url}/logout?${query}`);
        expect(answer.status, query.slice(0, 80)).toBe(400);
        expect(answer.headers.get('content-type')).toContain('text/html');
      }
      const huge = await fetch(`${test.url}/logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `SAMLResponse=${'A'.repeat(400_000)}&RelayState=${'a'.repeat(43)}` });
      expect(huge.status).toBe(400);
      expect(await huge.text()).toContain('too large');
    });
  });
}

/**
 * The samlp strategy (Gatehouse as a SAML service provider) against a real SAML identity provider built on
 * samlify (test-support/saml-upstream.ts), over HTTP with a cookie jar: the strategy contract, SP- and
 * IdP-initiated sign-in, signed and unsigned AuthnRequests in both bindings (samlify verifies our signatures from
 * our metadata), a response or an assertion signature, and the refusals: expired, replayed, re-signed by another
 * key, wrapped (XSW) and tampered assertions, another Audience, hostile XML.
 */
import { X509Certificate } from 'node:crypto';
import { decodeJwt } from 'jose';
import { DOMParser, XMLSerializer, type Document, type Element } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSamlUpstream, EMAIL_CLAIM, type SamlUpstream } from '../test-support/saml-upstream.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { createApp, management, readForm, TestBrowser, type TestApp } from '../test-support/sign-in.js';
import { profileFromAssertion } from './samlp.js';
import { APP_CALLBACK, redeem, runStrategyContract, sendCallback, type UpstreamCallback, type UpstreamDriver } from './strategy-contract.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const SAML_ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !(await postgresAvailable()))(`samlp: Gatehouse as a SAML service provider (${dialect})`, () => {
    let test: TestServer;
    let app: TestApp;
    /** Takes unsigned requests; signs the Response. */
    let idp: SamlUpstream;
    /** Wants signed AuthnRequests (and checks them against our metadata's certificate). */
    let signedIdp: SamlUpstream;
    /** Signs the assertion, not the Response (our metadata edited to WantAssertionsSigned). */
    let assertionIdp: SamlUpstream;

    async function createConnection(name: string, upstream: SamlUpstream, options: Record<string, unknown> = {}, trust: { wantAssertionsSigned?: boolean } = {}) {
      const response = await management(test, 'POST', '/connections', {
        name,
        strategy: 'samlp',
        options: { signInEndpoint: upstream.ssoUrl, signingCert: b64(upstream.certificatePem), ...options },
        enabled_clients: [app.client_id],
      });
      expect(response.status, await response.clone().text()).toBe(201);
      await trustConnection(upstream, name, trust);
      return (await response.json()) as Record<string, unknown>;
    }

    async function trustConnection(upstream: SamlUpstream, name: string, trust: { wantAssertionsSigned?: boolean } = {}) {
      const metadata = await fetch(`${test.url}/samlp/metadata?connection=${encodeURIComponent(name)}`);
      expect(metadata.status).toBe(200);
      upstream.trust(await metadata.text(), trust);
    }

    /** Starts a sign-in and stops at the IdP's answer, not yet posted to us. */
    async function callbackFrom(upstream: SamlUpstream, connection: string, login: string) {
      const browser = new TestBrowser();
      const start = await browser.get(`${test.url}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: APP_CALLBACK, response_type: 'code', scope: 'openid profile email', state: 'app-state', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', connection })}`);
      expect(start.status).toBe(302);
      const callback = await upstream.driver.signIn(browser, start.headers.get('location')!, `${test.url}/login/callback`, login);
      return { browser, callback };
    }

    /** Posts the callback and returns where the application is sent. */
    async function deliver(browser: TestBrowser, callback: UpstreamCallback): Promise<URL> {
      const done = await browser.follow(test.url, await sendCallback(browser, callback));
      if (!(done instanceof URL)) throw new Error(`expected a redirect to the application, got ${done.status}: ${(await done.text()).slice(0, 300)}`);
      return done;
    }

    const withResponse = (callback: UpstreamCallback, xml: string): UpstreamCallback => ({ url: callback.url, form: { ...callback.form!, SAMLResponse: b64(xml) } });

    beforeAll(async () => {
      test = await startTestServer({ dialect });
      app = await createApp(test);
      [idp, signedIdp, assertionIdp] = await Promise.all([startSamlUpstream(), startSamlUpstream({ wantAuthnRequestsSigned: true }), startSamlUpstream()]);
      await createConnection('saml-signed-post', signedIdp, { signSAMLRequest: true, protocolBinding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST' });
      await createConnection('saml-assertion-signed', assertionIdp, {}, { wantAssertionsSigned: true });
      await createConnection('saml-idp-initiated', idp, { idpinitiated: { enabled: true, client_id: app.client_id, client_protocol: 'oidc', client_authorizequery: `redirect_uri=${encodeURIComponent(APP_CALLBACK)}&scope=openid&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256` } });
    });
    afterAll(async () => {
      await Promise.all([idp?.close(), signedIdp?.close(), assertionIdp?.close()]);
      await test?.close();
    });

    // The contract's connection is created by the contract; the IdP reads our metadata once it exists.
    const contractDriver: UpstreamDriver = {
      stateParameter: 'RelayState',
      async signIn(browser, upstreamUrl, returnTo, login) {
        await trustConnection(idp, 'saml-contract');
        return idp.driver.signIn(browser, upstreamUrl, returnTo, login);
      },
    };
    describe('the strategy contract: samlp', () =>
      runStrategyContract(
        {
          strategy: 'samlp',
          connection: 'saml-contract',
          upstream: contractDriver,
          options: () => ({ signInEndpoint: idp.ssoUrl, signingCert: b64(idp.certificatePem) }),
          secrets: {},
          refused: { options: () => ({ signInEndpoint: idp.ssoUrl, signingCert: b64('not a certificate') }), says: 'signingCert' },
          userIdOf: (sub) => `samlp|saml-contract|${sub}`,
          isSocial: false,
        },
        { test: () => test, app: () => app },
      ));

    it('publishes SP metadata at /samlp/metadata?connection= with the reference entity ID and ACS; other names get the error page', async () => {
      const xml = await (await fetch(`${test.url}/samlp/metadata?connection=saml-signed-post`)).text();
      expect(xml).toMatch(/entityID="urn:auth0:[^:"]+:saml-signed-post"/);
      expect(xml).toContain(`Location="${test.url}/login/callback?connection=saml-signed-post"`);
      expect(xml).toContain('AuthnRequestsSigned="true"');
      expect(xml).toContain('X509Certificate');
      for (const query of ['?connection=nope', '', '?connection=']) {
        const response = await fetch(`${test.url}/samlp/metadata${query}`);
        expect(response.status).toBe(400);
        expect(response.headers.get('content-type')).toContain('text/html');
      }
    });

    it("stores the IdP certificate as the reference does (cert as PEM, SHA-1 thumbprints) and refuses options it cannot use", async () => {
      const list = (await (await management(test, 'GET', '/connections?name=saml-signed-post')).json()) as { options: Record<string, unknown> }[];
      const options = list[0]!.options;
      const certificate = new X509Certificate(signedIdp.certificatePem);
      expect(options.cert).toBe(certificate.toString());
      expect(options.thumbprints).toEqual([certificate.fingerprint.replace(/:/g, '').toLowerCase()]);
      const refusals: [Record<string, unknown>, string][] = [
        [{ signInEndpoint: idp.ssoUrl }, 'signingCert is required'],
        [{ signInEndpoint: 'http://idp.example/sso', signingCert: b64(idp.certificatePem) }, 'https'],
        [{ signInEndpoint: idp.ssoUrl, signingCert: b64(idp.certificatePem), signatureAlgorithm: 'rsa-sha1' }, 'SHA-1'],
        [{ signInEndpoint: idp.ssoUrl, signingCert: b64(idp.certificatePem), protocolBinding: 'urn:oasis:names:tc:SAML:2.0:bindings:SOAP' }, 'protocolBinding'],
        [{ signInEndpoint: idp.ssoUrl, signingCert: b64(idp.certificatePem), idpinitiated: { enabled: true } }, 'client_id'],
        [{ signInEndpoint: idp.ssoUrl, signingCert: b64(idp.certificatePem), idpinitiated: { enabled: true, client_id: 'x', client_protocol: 'wsfed' } }, 'wsfed'],
      ];
      for (const [bad, says] of refusals) {
        const response = await management(test, 'POST', '/connections', { name: 'saml-bad', strategy: 'samlp', options: bad });
        expect(response.status).toBe(400);
        expect(String(((await response.json()) as { message: string }).message)).toContain(says);
      }
    });

    it('signs the AuthnRequest with the tenant key in the HTTP-POST binding, and samlify verifies it from our metadata', async () => {
      const browser = new TestBrowser();
      const start = await browser.get(`${test.url}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: APP_CALLBACK, response_type: 'code', scope: 'openid profile email', state: 'app-state', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', connection: 'saml-signed-post' })}`);
      expect(start.status).toBe(200);
      const form = readForm(await start.text(), test.url);
      expect(form.action).toBe(signedIdp.ssoUrl);
      expect(Buffer.from(form.fields.SAMLRequest!, 'base64').toString('utf8')).toContain('SignatureValue');
      const answer = await browser.post(form.action, { ...form.fields, login: 'signed-post-user' });
      expect(answer.status, await answer.clone().text()).toBe(200);
      const back = readForm(await answer.text(), signedIdp.ssoUrl);
      const done = await deliver(browser, { url: new URL(back.action), form: back.fields });
      expect(done.searchParams.get('code')).toBeTruthy();
      expect(signedIdp.received.at(-1)?.signed).toBe(true);
    });

    it('signs the AuthnRequest in the HTTP-Redirect binding (Signature, SigAlg over the query), verified by samlify', async () => {
      await createConnection('saml-signed-redirect', signedIdp, { signSAMLRequest: true });
      const { browser, callback } = await callbackFrom(signedIdp, 'saml-signed-redirect', 'signed-redirect-user');
      expect(signedIdp.received.at(-1)?.signed).toBe(true);
      const done = await deliver(browser, callback);
      const claims = decodeJwt(String((await redeem(test, app, { done, browser, verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', callback })).id_token ?? ''));
      expect(claims.sub).toBe('samlp|saml-signed-redirect|signed-redirect-user');
    });

    it('a samlify IdP that wants signed requests refuses our unsigned one (so the signed tests above prove the signature)', async () => {
      await createConnection('saml-unsigned-to-strict', signedIdp, {});
      await expect(callbackFrom(signedIdp, 'saml-unsigned-to-strict', 'x')).rejects.toThrow(/IdP answered 400/);
    });

    it('accepts a signed assertion in an unsigned Response', async () => {
      const { browser, callback } = await callbackFrom(assertionIdp, 'saml-assertion-signed', 'assertion-user');
      const xml = Buffer.from(callback.form!.SAMLResponse!, 'base64').toString('utf8');
      const document = new DOMParser().parseFromString(xml, 'text/xml');
      const assertion = document.getElementsByTagNameNS(SAML_ASSERTION, 'Assertion').item(0)!;
      expect(assertion.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature').length).toBe(1);
      const done = await deliver(browser, callback);
      expect(done.searchParams.get('code')).toBeTruthy();
    });

    it('refuses an expired assertion, one re-signed by another key, one for another Audience, and a SHA-1 signature, at the application as access_denied', async () => {
      for (const [tweaks, says] of [
        [{ expiresInMinutes: -5 }, /expired|NotOnOrAfter/],
        [{ signer: 'rogue' as const }, /signature/i],
        [{ audience: 'urn:auth0:someone-else:saml' }, /audience/i],
        [{ signer: 'sha1' as const }, /algorithm is not accepted/],
      ] as const) {
        idp.next = tweaks;
        const { browser, callback } = await callbackFrom(idp, 'saml-contract', 'tweaked-user');
        const done = await deliver(browser, callback);
        expect(done.origin + done.pathname).toBe(APP_CALLBACK);
        expect(done.searchParams.get('error')).toBe('access_denied');
        expect(done.searchParams.get('error_description')).toMatch(says);
        expect(done.searchParams.get('code')).toBeNull();
      }
    });

    it('refuses wrapped (XSW) and tampered assertions', async () => {
      const variants: [string, (document: Document) => void, RegExp][] = [
        [
          'an evil assertion beside the signed one',
          (document) => {
            const original = document.getElementsByTagNameNS(SAML_ASSERTION, 'Assertion').item(0)!;
            const evil = original.cloneNode(true) as Element;
            evil.setAttribute('ID', '_evil');
            evil.getElementsByTagNameNS(SAML_ASSERTION, 'NameID').item(0)!.textContent = 'admin';
            const signature = evil.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature').item(0);
            if (signature) evil.removeChild(signature);
            original.parentNode!.insertBefore(evil, original);
          },
          /exactly one assertion/,
        ],
        [
          'the signed assertion hidden in Extensions, an evil one in its place',
          (document) => {
            const root = document.documentElement!;
            const original = document.getElementsByTagNameNS(SAML_ASSERTION, 'Assertion').item(0)!;
            const evil = original.cloneNode(true) as Element;
            evil.getElementsByTagNameNS(SAML_ASSERTION, 'NameID').item(0)!.textContent = 'admin';
            const signature = evil.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature').item(0);
            if (signature) evil.removeChild(signature);
            const extensions = document.createElementNS('urn:oasis:names:tc:SAML:2.0:protocol', 'samlp:Extensions');
            root.replaceChild(evil, original);
            extensions.appendChild(original);
            root.insertBefore(extensions, root.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:protocol', 'Status').item(0));
          },
          /exactly one assertion/,
        ],
        [
          'the signed assertion with another NameID',
          (document) => {
            document.getElementsByTagNameNS(SAML_ASSERTION, 'NameID').item(0)!.textContent = 'admin';
          },
          /signature/i,
        ],
      ];
      for (const [name, wrap, says] of variants) {
        const { browser, callback } = await callbackFrom(assertionIdp, 'saml-assertion-signed', 'wrapped-user');
        const document = new DOMParser().parseFromString(Buffer.from(callback.form!.SAMLResponse!, 'base64').toString('utf8'), 'text/xml');
        wrap(document);
        const done = await deliver(browser, withResponse(callback, new XMLSerializer().serializeToString(document)));
        expect(done.searchParams.get('error'), name).toBe('access_denied');
        expect(done.searchParams.get('error_description'), name).toMatch(says);
      }
    });

    it("refuses another sign-in's response (InResponseTo) and hostile XML", async () => {
      const first = await callbackFrom(idp, 'saml-contract', 'first-user');
      const second = await callbackFrom(idp, 'saml-contract', 'second-user');
      const crossed = await deliver(second.browser, { url: second.callback.url, form: { ...second.callback.form!, SAMLResponse: first.callback.form!.SAMLResponse! } });
      expect(crossed.searchParams.get('error_description')).toMatch(/InResponseTo/);
      const third = await callbackFrom(idp, 'saml-contract', 'third-user');
      const hostile = await deliver(third.browser, withResponse(third.callback, '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'));
      expect(hostile.searchParams.get('error_description')).toMatch(/DOCTYPE/);
    });

    it("shows a button for the connection and sends an email of its domain_aliases to the IdP from the login form", async () => {
      await createConnection('saml-corp', idp, { domain_aliases: ['saml-corp.example'] });
      const browser = new TestBrowser();
      const query = new URLSearchParams({ client_id: app.client_id, redirect_uri: APP_CALLBACK, response_type: 'code', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });
      const page = (await browser.follow(test.url, await browser.get(`${test.url}/authorize?${query}`))) as Response;
      const html = await page.text();
      expect(html).toContain('Continue with saml-corp');
      const form = readForm(html, test.url);
      const leaving = await browser.post(form.action, { ...form.fields, username: 'Carol@SAML-corp.example', password: '' });
      expect(leaving.status).toBe(303);
      const upstreamUrl = new URL(leaving.headers.get('location')!);
      expect(upstreamUrl.origin + upstreamUrl.pathname).toBe(idp.ssoUrl);
      expect(upstreamUrl.searchParams.get('SAMLRequest')).toBeTruthy();
      const done = await deliver(browser, await idp.driver.signIn(browser, upstreamUrl.href, `${test.url}/login/callback`, 'carol'));
      expect(done.searchParams.get('code')).toBeTruthy();
      expect((await management(test, 'GET', `/users/${encodeURIComponent('samlp|saml-corp|carol')}`)).status).toBe(200);
    });

    it('IdP-initiated: continues to the configured application, and refuses the same assertion twice (replay cache)', async () => {
      const acs = `${test.url}/login/callback?connection=saml-idp-initiated`;
      await trustConnection(idp, 'saml-idp-initiated');
      const samlResponse = await idp.unsolicited('idp-initiated-user');
      const browser = new TestBrowser();
      const posted = await browser.post(acs, { SAMLResponse: samlResponse, RelayState: '' });
      expect(posted.status, await posted.clone().text()).toBe(303);
      expect(posted.headers.get('location')).toMatch(/^\/authorize\?/);
      const done = await browser.follow(test.url, posted);
      expect(done instanceof URL && done.origin + done.pathname).toBe(APP_CALLBACK);
      expect((done as URL).searchParams.get('code')).toBeTruthy();
      // The same assertion again, from another browser: refused by the replay cache.
      const replay = await new TestBrowser().post(acs, { SAMLResponse: samlResponse });
      expect(replay.status).toBe(400);
      expect(await replay.text()).toContain('already used');
      // Expired, and to a connection that does not allow IdP-initiated sign-in.
      const expired = await new TestBrowser().post(acs, { SAMLResponse: await idp.unsolicited('late-user', { expiresInMinutes: -5 }) });
      expect(expired.status).toBe(400);
      await trustConnection(idp, 'saml-contract');
      const notAllowed = await new TestBrowser().post(`${test.url}/login/callback?connection=saml-contract`, { SAMLResponse: await idp.unsolicited('x') });
      expect(notAllowed.status).toBe(400);
      expect(notAllowed.headers.get('location')).toBeNull();
      // Not base64, and not XML.
      for (const bad of ['%%%not-base64%%%', b64('not xml at all'), b64('<?xml version="1.0" encoding="UTF-16"?><r/>')]) {
        expect((await new TestBrowser().post(acs, { SAMLResponse: bad })).status).toBe(400);
      }
    });
  });
}

describe('samlp profile mapping', () => {
  const attributes = new Map<string, string[]>([
    [EMAIL_CLAIM, ['Ada@Example.com']],
    ['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname', ['Ada']],
    ['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname', ['Lovelace']],
    ['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn', ['ada@corp.example']],
    ['employeeNumber', ['E-1815']],
    ['displayName', ['Countess Lovelace']],
  ]);

  it('maps the common claim URIs and uses the NameID as user id by default', () => {
    const profile = profileFromAssertion({ nameId: 'ada-nameid', attributes }, {});
    expect(profile).toMatchObject({ subject: 'ada-nameid', email: 'Ada@Example.com', given_name: 'Ada', family_name: 'Lovelace', name: 'Countess Lovelace', email_verified: false });
  });

  it('takes the user id from user_id_attribute and fields from fieldsMap (first attribute present wins)', () => {
    const profile = profileFromAssertion({ nameId: 'ada-nameid', attributes }, { user_id_attribute: 'employeeNumber', fieldsMap: { name: ['missing', 'displayName'], nickname: 'employeeNumber' } });
    expect(profile).toMatchObject({ subject: 'E-1815', name: 'Countess Lovelace', nickname: 'E-1815' });
  });

  it('falls back to the nameidentifier, then upn claims without a NameID, and refuses a profile without any', () => {
    expect(profileFromAssertion({ nameId: undefined, attributes }, {}).subject).toBe('ada@corp.example');
    expect(() => profileFromAssertion({ nameId: undefined, attributes: new Map() }, {})).toThrow(/no usable user id/);
  });
});

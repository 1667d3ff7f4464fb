/**
 * Single logout both ways and persistent NameIDs, checked by real service-provider libraries over HTTP with a
 * cookie jar: a LogoutRequest from one SAML application makes Gatehouse ask the session's other SAML
 * applications to log out (front-channel, a signed LogoutRequest each) before answering the first; a logout at
 * Gatehouse (/v2/logout) does the same before returning; @node-saml/node-saml and samlify (which schema-validates
 * what it receives) verify our LogoutRequests and answer them.
 */
import { inflateRawSync } from 'node:zlib';
import { SAML, ValidateInResponseTo, type SamlConfig } from '@node-saml/node-saml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { createApp, createUser, logIn, readForm, TestBrowser } from '../../test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 12';
const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';
const EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

/** samlify without its type declarations (they pull in the DOM library; see samlp.test.ts). */
interface SamlifyEntity {
  createLoginRequest(idp: SamlifyEntity, binding: string, options: { relayState: string }): { context: string };
  parseLoginResponse(idp: SamlifyEntity, binding: string, request: { body: Record<string, string | undefined> }): Promise<{ extract: { nameID: string; sessionIndex: { sessionIndex: string } } }>;
  parseLogoutRequest(idp: SamlifyEntity, binding: string, request: { body: Record<string, string | undefined> }): Promise<{ extract: { nameID: string; sessionIndex: string; request: { id: string } } }>;
  createLogoutResponse(idp: SamlifyEntity, requestInfo: unknown, binding: string, relayState: string): { context: string };
}
const samlifyModule = 'samlify';
const xmllintModule = '@authenio/samlify-xmllint-wasm';
const xmllint = (await import(xmllintModule)) as { validate(xml: string): Promise<unknown> };
const samlify = (await import(samlifyModule)) as {
  setSchemaValidator(validator: { validate(xml: string): Promise<unknown> }): void;
  IdentityProvider(settings: { metadata: string }): SamlifyEntity;
  ServiceProvider(settings: Record<string, unknown>): SamlifyEntity;
  Constants: { namespace: { binding: { post: string; redirect: string } } };
};

/** One service provider's URLs. */
const sp = (name: string) => ({ entity: `https://${name}.example/saml/metadata`, acs: `https://${name}.example/saml/acs`, logout: `https://${name}.example/saml/logout` });
const WIKI = sp('wiki');
const CRM = sp('crm');
const DOCS = sp('docs');
const HR = sp('hr');

describe('SAML single logout and persistent NameIDs', () => {
  let test: TestServer;
  let idpCert: string;
  const apps: Record<string, string> = {};

  const samlp = (urls: ReturnType<typeof sp>, extra: Record<string, unknown> = {}) => ({
    audience: urls.entity,
    nameIdentifierFormat: EMAIL,
    nameIdentifierProbes: ['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'],
    logout: { callback: urls.logout, slo_enabled: true },
    ...extra,
  });

  function nodeSaml(clientId: string, urls: ReturnType<typeof sp>, extra: Partial<SamlConfig> = {}): SAML {
    return new SAML({
      entryPoint: `${test.url}/samlp/${clientId}`,
      logoutUrl: `${test.url}/samlp/${clientId}/logout`,
      callbackUrl: urls.acs,
      issuer: urls.entity,
      audience: urls.entity,
      idpCert,
      idpIssuer: `urn:${new URL(test.url).host}`,
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      identifierFormat: EMAIL,
      disableRequestedAuthnContext: true,
      validateInResponseTo: ValidateInResponseTo.ifPresent,
      ...extra,
    });
  }

  /** Sends the browser to `url`; logs in when the login page shows; returns the form posted to the SP. */
  async function signIn(browser: TestBrowser, url: string, expectPassword: boolean): Promise<{ action: string; fields: Record<string, string> }> {
    let current = await browser.follow(test.url, await browser.get(url));
    if (current instanceof URL) throw new Error(`left the server for ${current.href}`);
    let page = await current.text();
    expect(page.includes('name="password"')).toBe(expectPassword);
    if (expectPassword) {
      const login = readForm(page, test.url);
      current = await browser.follow(test.url, await browser.post(login.action, { ...login.fields, username: 'ada@example.com', password: PASSWORD }));
      if (current instanceof URL) throw new Error(`left the server for ${current.href}`);
      page = await current.text();
    }
    expect(current.status, page.slice(0, 300)).toBe(200);
    return readForm(page, test.url);
  }

  const xmlOf = (field: string) => Buffer.from(field, 'base64').toString('utf8');

  beforeAll(async () => {
    test = await startTestServer();
    await createUser(test, 'ada@example.com', PASSWORD);
    const create = async (name: string, urls: ReturnType<typeof sp>, addon: Record<string, unknown>) => {
      apps[name] = (await createApp(test, { name, app_type: 'regular_web', token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], callbacks: [urls.acs], addons: { samlp: addon } })).client_id;
    };
    await create('wiki', WIKI, samlp(WIKI));
    await create('crm', CRM, samlp(CRM));
    await create('docs', DOCS, samlp(DOCS, { nameIdentifierFormat: PERSISTENT, nameIdentifierProbes: undefined }));
    await create('hr', HR, samlp(HR, { nameIdentifierFormat: PERSISTENT, nameIdentifierProbes: undefined, logout: { callback: HR.logout, slo_enabled: false } }));
    idpCert = await (await fetch(`${test.url}/pem`)).text();
    samlify.setSchemaValidator(xmllint);
  });
  afterAll(() => test.close());

  it('a LogoutRequest from one application logs the user out of the other (node-saml on both sides) before answering', async () => {
    const browser = new TestBrowser();
    const wiki = nodeSaml(apps.wiki!, WIKI);
    const crm = nodeSaml(apps.crm!, CRM);
    const wikiLogin = await wiki.validatePostResponseAsync({ SAMLResponse: (await signIn(browser, await wiki.getAuthorizeUrlAsync('', undefined, {}), true)).fields.SAMLResponse! });
    const crmLogin = await crm.validatePostResponseAsync({ SAMLResponse: (await signIn(browser, await crm.getAuthorizeUrlAsync('', undefined, {}), false)).fields.SAMLResponse! });

    // The wiki asks to log out; the browser is first sent to the CRM with a LogoutRequest.
    const wikiLogoutUrl = await wiki.getLogoutUrlAsync(wikiLogin.profile!, 'back-to-wiki', {});
    const toCrm = await browser.get(wikiLogoutUrl);
    expect(toCrm.status).toBe(200);
    const crmRequest = readForm(await toCrm.text(), test.url);
    expect(crmRequest.action).toBe(CRM.logout);
    expect(crmRequest.fields.RelayState).toMatch(/^[0-9a-f]{40}$/);
    const asked = await crm.validatePostRequestAsync({ SAMLRequest: crmRequest.fields.SAMLRequest! }); // signature, issuer, NotOnOrAfter
    expect(asked.loggedOut).toBe(true);
    expect(asked.profile?.nameID).toBe('ada@example.com');
    expect(asked.profile?.sessionIndex).toBe(crmLogin.profile?.sessionIndex);
    expect(xmlOf(crmRequest.fields.SAMLRequest!)).toContain(`Destination="${CRM.logout}"`);
    // Forged by another party (signed with a foreign key): the CRM refuses it.
    const tampered = Buffer.from(xmlOf(crmRequest.fields.SAMLRequest!).replace('ada@example.com', 'eve@example.com')).toString('base64');
    await expect(crm.validatePostRequestAsync({ SAMLRequest: tampered })).rejects.toThrow(/signature/i);

    // The CRM answers (HTTP-Redirect); the browser goes on to the wiki with its LogoutResponse.
    const crmAnswer = await crm.getLogoutResponseUrlAsync(asked.profile!, crmRequest.fields.RelayState!, {}, true);
    const toWiki = await browser.get(crmAnswer);
    expect(toWiki.status).toBe(200);
    const wikiResponse = readForm(await toWiki.text(), test.url);
    expect(wikiResponse.action).toBe(WIKI.logout);
    expect(wikiResponse.fields.RelayState).toBe('back-to-wiki');
    expect((await wiki.validatePostResponseAsync({ SAMLResponse: wikiResponse.fields.SAMLResponse! })).loggedOut).toBe(true);
    const wikiRequestId = /ID="([^"]+)"/.exec(inflateRawSync(Buffer.from(new URL(wikiLogoutUrl).searchParams.get('SAMLRequest')!, 'base64')).toString())![1];
    const answer = xmlOf(wikiResponse.fields.SAMLResponse!);
    expect(answer).toContain(`InResponseTo="${wikiRequestId}"`);
    expect(answer).not.toContain('PartialLogout');

    // The CRM's answer once more: it no longer answers anything in progress.
    const again = await browser.get(crmAnswer);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('You are logged out');
    // Both are logged out at Gatehouse: the next sign-in asks for the password.
    await signIn(browser, await crm.getAuthorizeUrlAsync('', undefined, {}), true);
  });

  it('says PartialLogout when another application did not confirm, and refuses an answer to a request it did not send', async () => {
    const browser = new TestBrowser();
    const wiki = nodeSaml(apps.wiki!, WIKI);
    const crm = nodeSaml(apps.crm!, CRM);
    const wikiLogin = await wiki.validatePostResponseAsync({ SAMLResponse: (await signIn(browser, await wiki.getAuthorizeUrlAsync('', undefined, {}), true)).fields.SAMLResponse! });
    await crm.validatePostResponseAsync({ SAMLResponse: (await signIn(browser, await crm.getAuthorizeUrlAsync('', undefined, {}), false)).fields.SAMLResponse! });
    const crmRequest = readForm(await (await browser.get(await wiki.getLogoutUrlAsync(wikiLogin.profile!, '', {}))).text(), test.url);
    const asked = await crm.validatePostRequestAsync({ SAMLRequest: crmRequest.fields.SAMLRequest! });

    // The wiki (not the one asked) answering in the CRM's place, and an answer to another request ID: refused.
    const foreign = await browser.get(await wiki.getLogoutResponseUrlAsync(asked.profile!, crmRequest.fields.RelayState!, {}, true));
    expect(foreign.status).toBe(400);
    const wrongId = await browser.get(await crm.getLogoutResponseUrlAsync({ ...asked.profile!, ID: '_not-ours' }, crmRequest.fields.RelayState!, {}, true));
    expect(wrongId.status).toBe(400);
    expect(await wrongId.text()).toMatch(/does not answer/);

    const failed = await browser.get(await crm.getLogoutResponseUrlAsync(asked.profile!, crmRequest.fields.RelayState!, {}, false));
    const wikiResponse = readForm(await failed.text(), test.url);
    expect(xmlOf(wikiResponse.fields.SAMLResponse!)).toMatch(/StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:PartialLogout"/);
  });

  it('a logout at Gatehouse (/v2/logout) asks the SAML applications of the session (samlify answers) before returning', async () => {
    const browser = new TestBrowser();
    const oidc = await createApp(test, { name: 'OIDC app' });
    const landed = await logIn(test, browser, { client_id: oidc.client_id, redirect_uri: 'https://app.example/callback', response_type: 'token id_token', nonce: 'n', scope: 'openid' }, { username: 'ada@example.com', password: PASSWORD });
    expect(landed.href).toMatch(/^https:\/\/app\.example\/callback#/);

    // samlify as the CRM: it reads our metadata (both logout bindings), signs in without a password prompt.
    const idp = samlify.IdentityProvider({ metadata: await (await fetch(`${test.url}/samlp/metadata/${apps.crm}`)).text() });
    const crm = samlify.ServiceProvider({
      entityID: CRM.entity,
      assertionConsumerService: [{ Binding: samlify.Constants.namespace.binding.post, Location: CRM.acs }],
      singleLogoutService: [{ Binding: samlify.Constants.namespace.binding.post, Location: CRM.logout }],
      wantAssertionsSigned: true,
      nameIDFormat: [EMAIL],
    });
    const { context } = crm.createLoginRequest(idp, 'redirect', { relayState: '' });
    const login = await crm.parseLoginResponse(idp, 'post', { body: { SAMLResponse: (await signIn(browser, context, false)).fields.SAMLResponse } });
    expect(login.extract.nameID).toBe('ada@example.com');

    const toCrm = await browser.get(`${test.url}/v2/logout?client_id=${oidc.client_id}&returnTo=${encodeURIComponent('https://app.example/')}`);
    expect(toCrm.status).toBe(200);
    const request = readForm(await toCrm.text(), test.url);
    expect(request.action).toBe(CRM.logout);
    // samlify schema-validates the LogoutRequest and verifies its signature with the certificate from our metadata.
    const parsed = await crm.parseLogoutRequest(idp, 'post', { body: { SAMLRequest: request.fields.SAMLRequest } });
    expect(parsed.extract.nameID).toBe('ada@example.com');
    const { context: answerUrl } = crm.createLogoutResponse(idp, parsed, 'redirect', request.fields.RelayState!);
    expect(answerUrl.startsWith(`${test.url}/samlp/${apps.crm}/logout?`)).toBe(true);
    const back = await browser.get(answerUrl);
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe('https://app.example/');
    // The OIDC application's next sign-in asks for the password: the one session ended.
    const next = await browser.follow(test.url, await browser.get(`${test.url}/authorize?client_id=${oidc.client_id}&redirect_uri=${encodeURIComponent('https://app.example/callback')}&response_type=${encodeURIComponent('token id_token')}&nonce=n&scope=openid`));
    expect(next instanceof URL ? '' : await next.text()).toContain('name="password"');
  });

  it('a persistent NameID is opaque, stable for one application and different for another; applications without slo_enabled are not asked', async () => {
    const docs = nodeSaml(apps.docs!, DOCS, { identifierFormat: PERSISTENT });
    const hr = nodeSaml(apps.hr!, HR, { identifierFormat: PERSISTENT });
    const first = new TestBrowser();
    const docsFirst = await docs.validatePostResponseAsync({ SAMLResponse: (await signIn(first, await docs.getAuthorizeUrlAsync('', undefined, {}), true)).fields.SAMLResponse! });
    const hrForm = await signIn(first, await hr.getAuthorizeUrlAsync('', undefined, {}), false);
    const hrFirst = await hr.validatePostResponseAsync({ SAMLResponse: hrForm.fields.SAMLResponse! });
    expect(docsFirst.profile?.nameIDFormat).toBe(PERSISTENT);
    expect(docsFirst.profile?.nameID).toMatch(/^_[0-9a-f]{40}$/);
    expect(hrFirst.profile?.nameID).toMatch(/^_[0-9a-f]{40}$/);
    expect(hrFirst.profile?.nameID).not.toBe(docsFirst.profile?.nameID);
    expect(xmlOf(hrForm.fields.SAMLResponse!)).toContain(`SPNameQualifier="${HR.entity}"`);
    // Another browser, another session: the same NameID for the same application.
    const second = new TestBrowser();
    const docsSecond = await docs.validatePostResponseAsync({ SAMLResponse: (await signIn(second, await docs.getAuthorizeUrlAsync('', undefined, {}), true)).fields.SAMLResponse! });
    expect(docsSecond.profile?.nameID).toBe(docsFirst.profile?.nameID);

    // Logging out of the docs in the first browser: HR has slo_enabled false, so nobody else is asked.
    const answer = await first.get(await docs.getLogoutUrlAsync(docsFirst.profile!, '', {}));
    const form = readForm(await answer.text(), test.url);
    expect(form.action).toBe(DOCS.logout);
    expect((await docs.validatePostResponseAsync({ SAMLResponse: form.fields.SAMLResponse! })).loggedOut).toBe(true);
  });
});

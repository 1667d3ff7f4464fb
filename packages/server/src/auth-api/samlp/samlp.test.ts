/**
 * Gatehouse as a SAML identity provider, checked by a real service-provider library (@node-saml/node-saml, a
 * different code base from our IdP side) over real HTTP with a cookie jar through the hosted login: SP-initiated
 * sign-in in both bindings, the shared SSO session, IdP-initiated sign-in, signed AuthnRequests required, single
 * logout, and the refusals (hostile XML, unknown application, foreign ACS URL, replay, expiry) as error pages.
 */
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { SAML, ValidateInResponseTo, type SamlConfig } from '@node-saml/node-saml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingCertificate } from '../../crypto/x509-certificates.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { createApp, createUser, logIn, management, readForm, TestBrowser } from '../../test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 12';
const ACS = 'https://sp.example/saml/acs';
const SP_ENTITY = 'https://sp.example/saml/metadata';
const LOGOUT_CALLBACK = 'https://sp.example/saml/logout';

/**
 * samlify, loaded without its type declarations: they pull in the DOM library (through its own copy of xmldom),
 * which would change global types (fetch bodies) for every other file of the type check.
 */
interface SamlifyEntity {
  createLoginRequest(idp: SamlifyEntity, binding: string, options: { relayState: string }): { context: string };
  parseLoginResponse(idp: SamlifyEntity, binding: string, request: { body: Record<string, string | undefined> }): Promise<unknown>;
}
const samlifyModule = 'samlify';
/** samlify's schema validator on xmllint (libxml2) compiled to WebAssembly; it ships no type declarations. */
const xmllintModule = '@authenio/samlify-xmllint-wasm';
const xmllint = (await import(xmllintModule)) as { validate(xml: string): Promise<unknown> };
const samlify = (await import(samlifyModule)) as {
  setSchemaValidator(validator: { validate(xml: string): Promise<unknown> }): void;
  IdentityProvider(settings: { metadata: string }): SamlifyEntity;
  ServiceProvider(settings: Record<string, unknown>): SamlifyEntity;
  Constants: { namespace: { binding: { post: string } } };
};

const spKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const spKeyPem = spKey.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('SAML identity provider (/samlp)', () => {
  let test: TestServer;
  let clientId: string;
  let signedClientId: string;
  let idpCert: string;
  let spCert: string;

  const samlp = (extra: Record<string, unknown> = {}) => ({
    audience: SP_ENTITY,
    mappings: { 'user_metadata.department': 'department', given_name: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname' },
    nameIdentifierFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    nameIdentifierProbes: ['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'],
    lifetimeInSeconds: 300,
    logout: { callback: LOGOUT_CALLBACK, slo_enabled: true },
    defaultRelayState: '/home',
    ...extra,
  });

  function serviceProvider(id: string, extra: Partial<SamlConfig> = {}): SAML {
    return new SAML({
      entryPoint: `${test.url}/samlp/${id}`,
      logoutUrl: `${test.url}/samlp/${id}/logout`,
      callbackUrl: ACS,
      issuer: SP_ENTITY,
      audience: SP_ENTITY,
      idpCert,
      idpIssuer: `urn:${new URL(test.url).host}`,
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      signatureAlgorithm: 'sha256',
      digestAlgorithm: 'sha256',
      identifierFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      disableRequestedAuthnContext: true,
      validateInResponseTo: ValidateInResponseTo.always,
      ...extra,
    });
  }

  /** Follows the browser until the page that posts to the service provider; returns that form. */
  async function formPostedToSp(browser: TestBrowser, response: Response): Promise<{ action: string; fields: Record<string, string> }> {
    let current = await browser.follow(test.url, response);
    if (current instanceof URL) throw new Error(`left the server for ${current.href}`);
    let page = await current.text();
    if (page.includes('name="password"')) {
      const login = readForm(page, test.url);
      current = await browser.follow(test.url, await browser.post(login.action, { ...login.fields, username: 'ada@example.com', password: PASSWORD }));
      if (current instanceof URL) throw new Error(`left the server for ${current.href}`);
      page = await current.text();
    }
    expect(current.status, page.slice(0, 400)).toBe(200);
    return readForm(page, test.url);
  }

  async function logInThroughPage(browser: TestBrowser, url: string) {
    const first = await browser.follow(test.url, await browser.get(url));
    if (first instanceof URL) throw new Error('expected the login page');
    const page = await first.text();
    expect(page).toContain('name="password"');
    const login = readForm(page, test.url);
    return formPostedToSp(browser, await browser.post(login.action, { ...login.fields, username: 'ada@example.com', password: PASSWORD }));
  }

  beforeAll(async () => {
    test = await startTestServer();
    await createUser(test, 'ada@example.com', PASSWORD, { given_name: 'Ada', user_metadata: { department: 'Engines' } });
    spCert = await signingCertificate({ kid: 'sp-test', privateKey: spKey }, 'sp.example');
    clientId = (await createApp(test, { name: 'SAML app', app_type: 'regular_web', token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], callbacks: [ACS], addons: { samlp: samlp() } })).client_id;
    signedClientId = (await createApp(test, { name: 'Signed SAML app', app_type: 'regular_web', token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], callbacks: [ACS], addons: { samlp: samlp({ signingCert: spCert }) } })).client_id;
    idpCert = await (await fetch(`${test.url}/pem`)).text();
  });
  afterAll(() => test.close());

  it('validates addons.samlp on create and update', async () => {
    const bad = async (samlpAddon: unknown) => {
      const response = await management(test, 'PATCH', `/clients/${clientId}`, { addons: { samlp: samlpAddon } });
      const body = (await response.json()) as { message: string };
      expect(response.status).toBe(400);
      return body.message;
    };
    expect(await bad({ signatureAlgorithm: 'rsa-sha1' })).toMatch(/signatureAlgorithm/);
    expect(await bad({ lifetimeInSeconds: 0 })).toMatch(/lifetimeInSeconds/);
    expect(await bad({ signingCert: 'not a certificate' })).toMatch(/signingCert/);
    expect(await bad({ mappings: { 'a b': 'x' } })).toMatch(/mappings/);
    expect(await bad({ logout: { callback: 'javascript:alert(1)' } })).toMatch(/logout.callback/);
    expect(await bad({ unknownSetting: true })).toMatch(/unknownSetting/);
    const created = await management(test, 'POST', '/clients', { name: 'Bad', addons: { samlp: { digestAlgorithm: 'md5' } } });
    expect(created.status).toBe(400);
    const read = (await (await management(test, 'GET', `/clients/${clientId}`)).json()) as { addons: { samlp: { audience: string } } };
    expect(read.addons.samlp.audience).toBe(SP_ENTITY);
  });

  it('publishes metadata and the signing certificate (/pem, /cer) with the same key', async () => {
    const response = await fetch(`${test.url}/samlp/metadata/${clientId}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/samlmetadata\+xml/);
    const xml = await response.text();
    expect(xml).toContain(`entityID="urn:${new URL(test.url).host}"`);
    expect(xml).toContain(`<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${test.url}/samlp/${clientId}"/>`);
    expect(xml).toContain(`Location="${test.url}/samlp/${clientId}/logout"`);
    const certificates = [...xml.matchAll(/<ds:X509Certificate>([^<]+)</g)].map((m) => m[1]);
    expect(certificates).toHaveLength(2); // current and next
    const pem = new X509Certificate(idpCert);
    expect(certificates[0]).toBe(pem.raw.toString('base64'));
    expect(Buffer.from(await (await fetch(`${test.url}/cer`)).arrayBuffer()).equals(pem.raw)).toBe(true);
    // Deterministic: the same key gives the same certificate on every request (and every node).
    expect(await (await fetch(`${test.url}/pem`)).text()).toBe(idpCert);
    expect((await fetch(`${test.url}/samlp/metadata/nope`)).status).toBe(400);
  });

  it('signs in SP-initiated (HTTP-Redirect) through the hosted login; the SP validates the Response and reads mapped attributes', async () => {
    const sp = serviceProvider(clientId);
    const browser = new TestBrowser();
    const url = await sp.getAuthorizeUrlAsync('relay-1', undefined, {});
    const form = await logInThroughPage(browser, url);
    expect(form.action).toBe(ACS);
    expect(form.fields.RelayState).toBe('relay-1');
    const { profile, loggedOut } = await sp.validatePostResponseAsync({ SAMLResponse: form.fields.SAMLResponse!, RelayState: form.fields.RelayState! });
    expect(loggedOut).toBe(false);
    expect(profile?.nameID).toBe('ada@example.com');
    expect(profile?.nameIDFormat).toBe('urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress');
    expect(profile?.issuer).toBe(`urn:${new URL(test.url).host}`);
    expect(profile?.sessionIndex).toMatch(/^_[0-9a-f]{40}$/);
    expect(profile?.department).toBe('Engines');
    expect(profile?.['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname']).toBe('Ada');
    // Neither SP library checks these; the Web Browser SSO profile requires them (§4.1.4.2).
    const xml = Buffer.from(form.fields.SAMLResponse!, 'base64').toString();
    expect(xml).toContain(`Destination="${ACS}"`);
    expect(xml).toMatch(new RegExp(`<saml:SubjectConfirmationData InResponseTo="_[^"]+" NotOnOrAfter="[^"]+" Recipient="${ACS}"/>`));
    expect(xml).toContain('<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">');
    expect(profile?.['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/nameidentifier']).toMatch(/^auth0\||\|/);
    // The same Response is refused a second time by the SP (InResponseTo used), and an SP expecting another audience refuses it.
    await expect(sp.validatePostResponseAsync({ SAMLResponse: form.fields.SAMLResponse! })).rejects.toThrow();
    const other = serviceProvider(clientId, { audience: 'https://other.example', validateInResponseTo: ValidateInResponseTo.never });
    await expect(other.validatePostResponseAsync({ SAMLResponse: form.fields.SAMLResponse! })).rejects.toThrow(/audience/i);
    const strangerCert = await signingCertificate({ kid: 'stranger', privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey }, 'stranger');
    const stranger = serviceProvider(clientId, { idpCert: strangerCert, validateInResponseTo: ValidateInResponseTo.never });
    await expect(stranger.validatePostResponseAsync({ SAMLResponse: form.fields.SAMLResponse! })).rejects.toThrow(/signature/i);
  });

  it('signs in SP-initiated (HTTP-POST) without a password prompt when the SSO session exists, then IdP-initiated', async () => {
    const browser = new TestBrowser();
    const sp = serviceProvider(clientId, { authnRequestBinding: 'HTTP-POST' });
    const first = await logInThroughPage(browser, await sp.getAuthorizeUrlAsync('', undefined, {}));
    await sp.validatePostResponseAsync({ SAMLResponse: first.fields.SAMLResponse! });

    const request = readForm(await sp.getAuthorizeFormAsync('relay-post'), test.url);
    expect(request.action).toBe(`${test.url}/samlp/${clientId}`);
    const answered = await browser.post(request.action, request.fields);
    expect(answered.status).toBe(200); // straight to the form that posts the Response: no login page
    const form = readForm(await answered.text(), test.url);
    const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: form.fields.SAMLResponse!, RelayState: form.fields.RelayState! });
    expect(profile?.nameID).toBe('ada@example.com');
    expect(form.fields.RelayState).toBe('relay-post');

    // IdP-initiated: no AuthnRequest; the configured default RelayState; no InResponseTo.
    const idpInitiated = await browser.get(`${test.url}/samlp/${clientId}`);
    expect(idpInitiated.status).toBe(200);
    const unsolicited = readForm(await idpInitiated.text(), test.url);
    expect(unsolicited.fields.RelayState).toBe('/home');
    const lenient = serviceProvider(clientId, { validateInResponseTo: ValidateInResponseTo.ifPresent });
    expect((await lenient.validatePostResponseAsync({ SAMLResponse: unsolicited.fields.SAMLResponse! })).profile?.nameID).toBe('ada@example.com');
    // The contract's form: the application in the URL, the rest form-encoded.
    const posted = await browser.post(`${test.url}/samlp/${clientId}`, { RelayState: '/reports' });
    expect(posted.status).toBe(200);
    expect(readForm(await posted.text(), test.url).fields.RelayState).toBe('/reports');
  });

  it('passes unmapped claims through (prefixed, or as-is), adds the identity, and types the values, as the add-on says', async () => {
    const app = await createApp(test, { name: 'SAML claims app', app_type: 'regular_web', token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], callbacks: [ACS], addons: { samlp: samlp() } });
    const browser = new TestBrowser();
    await logInThroughPage(browser, await serviceProvider(app.client_id).getAuthorizeUrlAsync('', undefined, {}));
    /** Attribute name → [xsi:type, values] of an IdP-initiated Response for the app (the session exists). */
    const attributesNow = async () => {
      const form = readForm(await (await browser.get(`${test.url}/samlp/${app.client_id}`)).text(), test.url);
      const lenient = serviceProvider(app.client_id, { validateInResponseTo: ValidateInResponseTo.ifPresent });
      await lenient.validatePostResponseAsync({ SAMLResponse: form.fields.SAMLResponse! }); // still signed as the SP expects
      const xml = Buffer.from(form.fields.SAMLResponse!, 'base64').toString();
      const found = new Map<string, [string, string[]]>();
      for (const [, name, body] of xml.matchAll(/<saml:Attribute Name="([^"]+)"[^>]*>(.*?)<\/saml:Attribute>/g)) {
        const values = [...body!.matchAll(/xsi:type="([^"]+)">([^<]*)</g)];
        found.set(name!, [values[0]![1]!, values.map((v) => v[2]!)]);
      }
      return found;
    };
    const PREFIX = 'http://schemas.auth0.com/';
    const byDefault = await attributesNow();
    expect(byDefault.get(`${PREFIX}email_verified`)).toEqual(['xs:boolean', ['false']]);
    expect(byDefault.get(`${PREFIX}nickname`)).toEqual(['xs:string', ['ada']]);
    expect(byDefault.get('department')).toEqual(['xs:string', ['Engines']]);
    expect(byDefault.has(`${PREFIX}user_metadata`)).toBe(false); // objects only through mappings
    expect(byDefault.get(`${PREFIX}identities/default/provider`)).toEqual(['xs:string', ['auth0']]);
    expect(byDefault.get(`${PREFIX}identities/default/connection`)).toEqual(['xs:string', ['Username-Password-Authentication']]);
    expect(byDefault.get(`${PREFIX}identities/default/isSocial`)).toEqual(['xs:boolean', ['false']]);

    const patch = (extra: Record<string, unknown>) => management(test, 'PATCH', `/clients/${app.client_id}`, { addons: { samlp: samlp(extra) } });
    expect((await patch({ mapUnknownClaimsAsIs: true, mapIdentities: false, typedAttributes: false })).status).toBe(200);
    const asIs = await attributesNow();
    expect(asIs.get('nickname')).toEqual(['xs:anyType', ['ada']]);
    expect(asIs.has(`${PREFIX}nickname`)).toBe(false);
    expect([...asIs.keys()].some((name) => name.includes('identities/'))).toBe(false);
    expect(new Set([...asIs.values()].map(([type]) => type))).toEqual(new Set(['xs:anyType']));

    expect((await patch({ passthroughClaimsWithNoMapping: false, createUpnClaim: false, mapIdentities: false })).status).toBe(200);
    expect([...(await attributesNow()).keys()].sort()).toEqual(['department', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/nameidentifier']);
  });

  it('shares the SSO session with OpenID Connect: after an OIDC login, the SAML application signs in without a password', async () => {
    const oidc = await createApp(test, { name: 'OIDC app' });
    const browser = new TestBrowser();
    const landed = await logIn(test, browser, { client_id: oidc.client_id, redirect_uri: 'https://app.example/callback', response_type: 'token id_token', nonce: 'n', scope: 'openid' }, { username: 'ada@example.com', password: PASSWORD });
    expect(landed.href).toMatch(/^https:\/\/app\.example\/callback#/);
    const sp = serviceProvider(clientId);
    const answered = await browser.get(await sp.getAuthorizeUrlAsync('', undefined, {}));
    expect(answered.status).toBe(200); // the Response at once, no login page
    const form = readForm(await answered.text(), test.url);
    expect((await sp.validatePostResponseAsync({ SAMLResponse: form.fields.SAMLResponse! })).profile?.nameID).toBe('ada@example.com');
  });

  it('requires signed AuthnRequests once signingCert is set (both bindings)', async () => {
    const signing = { privateKey: spKeyPem, signatureAlgorithm: 'sha256' as const, digestAlgorithm: 'sha256' };
    const browser = new TestBrowser();
    const signedRedirect = serviceProvider(signedClientId, signing);
    const form = await logInThroughPage(browser, await signedRedirect.getAuthorizeUrlAsync('', undefined, {}));
    expect((await signedRedirect.validatePostResponseAsync({ SAMLResponse: form.fields.SAMLResponse! })).profile?.nameID).toBe('ada@example.com');

    const signedPost = serviceProvider(signedClientId, { ...signing, authnRequestBinding: 'HTTP-POST' });
    const request = readForm(await signedPost.getAuthorizeFormAsync(''), test.url);
    // node-saml DEFLATEs POST-binding requests too (our side accepts both).
    expect(inflateRawSync(Buffer.from(request.fields.SAMLRequest!, 'base64')).toString()).toMatch(/<(ds:)?Signature /);
    expect((await browser.post(request.action, request.fields)).status).toBe(200);

    const unsigned = serviceProvider(signedClientId);
    const refused = await browser.get(await unsigned.getAuthorizeUrlAsync('', undefined, {}));
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/must be signed/);
    const unsignedPost = readForm(await serviceProvider(signedClientId, { authnRequestBinding: 'HTTP-POST' }).getAuthorizeFormAsync(''), test.url);
    const refusedPost = await browser.post(unsignedPost.action, unsignedPost.fields);
    expect(refusedPost.status).toBe(400);
    expect(await refusedPost.text()).toMatch(/requires signed SAML requests/);
    // Signed by another key: refused.
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const forged = await browser.get(await serviceProvider(signedClientId, { ...signing, privateKey: otherKey }).getAuthorizeUrlAsync('', undefined, {}));
    expect(forged.status).toBe(400);
    expect(await forged.text()).toMatch(/does not verify/);
  });

  it('ends the SSO session on an SP-initiated LogoutRequest and answers with a LogoutResponse the SP accepts', async () => {
    const browser = new TestBrowser();
    const sp = serviceProvider(clientId);
    const form = await logInThroughPage(browser, await sp.getAuthorizeUrlAsync('', undefined, {}));
    const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: form.fields.SAMLResponse! });
    const logoutUrl = await sp.getLogoutUrlAsync(profile!, 'bye', {});
    const answer = await browser.get(logoutUrl);
    expect(answer.status).toBe(200);
    const logoutForm = readForm(await answer.text(), test.url);
    expect(logoutForm.action).toBe(LOGOUT_CALLBACK);
    expect(logoutForm.fields.RelayState).toBe('bye');
    // node-saml reads InResponseTo of a POSTed Response only (not of a LogoutResponse): checked here instead.
    const lenient = serviceProvider(clientId, { validateInResponseTo: ValidateInResponseTo.ifPresent });
    const result = await lenient.validatePostResponseAsync({ SAMLResponse: logoutForm.fields.SAMLResponse! });
    expect(result.loggedOut).toBe(true);
    const requestId = /ID="([^"]+)"/.exec(inflateRawSync(Buffer.from(new URL(logoutUrl).searchParams.get('SAMLRequest')!, 'base64')).toString())![1];
    expect(Buffer.from(logoutForm.fields.SAMLResponse!, 'base64').toString()).toContain(`InResponseTo="${requestId}"`);
    // The session is gone: the next sign-in asks for the password again.
    const next = await browser.follow(test.url, await browser.get(await sp.getAuthorizeUrlAsync('', undefined, {})));
    expect(next instanceof URL ? '' : await next.text()).toContain('name="password"');
    expect((await browser.get(logoutUrl)).status).toBe(400); // the same LogoutRequest again
  });

  it('keeps an in-flight sign-in working across a key rotation for an SP that read the metadata (current and next)', async () => {
    const metadata = await (await fetch(`${test.url}/samlp/metadata/${clientId}`)).text();
    const published = [...metadata.matchAll(/<ds:X509Certificate>([^<]+)</g)].map((m) => m[1]!);
    const sp = serviceProvider(clientId, { idpCert: published });
    const browser = new TestBrowser();
    const loginPage = await browser.follow(test.url, await browser.get(await sp.getAuthorizeUrlAsync('', undefined, {})));
    if (loginPage instanceof URL) throw new Error('expected the login page');
    const login = readForm(await loginPage.text(), test.url);
    await test.server.prepared.keyRing.rotate(test.server.prepared.bootstrap!.tenant.id);
    const form = await formPostedToSp(browser, await browser.post(login.action, { ...login.fields, username: 'ada@example.com', password: PASSWORD }));
    expect((await sp.validatePostResponseAsync({ SAMLResponse: form.fields.SAMLResponse! })).profile?.nameID).toBe('ada@example.com');
    // Signed by what was `next`: an SP that pinned only the old certificate refuses it.
    const pinned = serviceProvider(clientId, { idpCert: published[0]!, validateInResponseTo: ValidateInResponseTo.never });
    await expect(pinned.validatePostResponseAsync({ SAMLResponse: form.fields.SAMLResponse! })).rejects.toThrow(/signature/i);
    idpCert = await (await fetch(`${test.url}/pem`)).text();
    expect(new X509Certificate(idpCert).raw.toString('base64')).toBe(published[1]);
  });

  it('works with samlify as the SP too: it reads our metadata, and schema-validates and verifies the Response', async () => {
    samlify.setSchemaValidator(xmllint);
    const metadata = await (await fetch(`${test.url}/samlp/metadata/${clientId}`)).text();
    const idp = samlify.IdentityProvider({ metadata });
    const sp = samlify.ServiceProvider({
      entityID: SP_ENTITY,
      assertionConsumerService: [{ Binding: samlify.Constants.namespace.binding.post, Location: ACS }],
      wantAssertionsSigned: true,
      nameIDFormat: ['urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'],
    });
    const { context } = sp.createLoginRequest(idp, 'redirect', { relayState: 'from-samlify' });
    expect(context.startsWith(`${test.url}/samlp/${clientId}?`)).toBe(true);
    const form = await logInThroughPage(new TestBrowser(), context);
    expect(form.fields.RelayState).toBe('from-samlify');
    const { extract } = (await sp.parseLoginResponse(idp, 'post', { body: { SAMLResponse: form.fields.SAMLResponse, RelayState: form.fields.RelayState } })) as {
      extract: { nameID: string; attributes: Record<string, string>; audience: string };
    };
    expect(extract.nameID).toBe('ada@example.com');
    expect(extract.audience).toBe(SP_ENTITY);
    expect(extract.attributes.department).toBe('Engines');
  });

  describe('refusals: the error page (400), never a 5xx, never a redirect', () => {
    const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const authnRequest = (attrs: { id?: string; acs?: string; instant?: string } = {}, prefix = '') =>
      `${prefix}<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${attrs.id ?? `_r${Math.random().toString(36).slice(2)}`}" Version="2.0" IssueInstant="${attrs.instant ?? now()}" AssertionConsumerServiceURL="${attrs.acs ?? ACS}" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"><saml:Issuer>${SP_ENTITY}</saml:Issuer></samlp:AuthnRequest>`;
    const redirectUrl = (id: string, xml: string | Buffer) => `${test.url}/samlp/${id}?SAMLRequest=${encodeURIComponent(deflateRawSync(xml).toString('base64'))}`;
    const expectRefused = async (response: Response, message: RegExp) => {
      const page = await response.text();
      expect(response.status, page.slice(0, 300)).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(page).toMatch(message);
    };

    it('refuses hostile XML: DTD, entities, billion laughs, wrong encodings, deep nesting, oversized, bad base64 or deflate', async () => {
      const browser = new TestBrowser();
      const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>${authnRequest().replace('</saml:Issuer>', '&lol2;</saml:Issuer>')}`;
      await expectRefused(await browser.get(redirectUrl(clientId, laughs)), /DOCTYPE/);
      const xxe = `<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>${authnRequest()}`;
      await expectRefused(await browser.get(redirectUrl(clientId, xxe)), /DOCTYPE/);
      await expectRefused(await browser.post(`${test.url}/samlp/${clientId}`, { SAMLRequest: Buffer.from(xxe).toString('base64') }), /DOCTYPE/);
      await expectRefused(await browser.get(redirectUrl(clientId, `<?xml version="1.0" encoding="ISO-8859-1"?>${authnRequest()}`)), /only UTF-8/);
      await expectRefused(await browser.get(redirectUrl(clientId, Buffer.from(authnRequest(), 'utf16le'))), /UTF-8|well-formed/);
      await expectRefused(await browser.get(redirectUrl(clientId, authnRequest().replace('</saml:Issuer>', `</saml:Issuer>${'<a>'.repeat(200)}${'</a>'.repeat(200)}`))), /nested too deeply/);
      await expectRefused(await browser.get(redirectUrl(clientId, `${authnRequest().slice(0, -20)}`)), /well-formed/);
      await expectRefused(await browser.get(redirectUrl(clientId, `${authnRequest()}<!-- ${'x'.repeat(70_000)} -->`)), /too large/);
      await expectRefused(await browser.get(`${test.url}/samlp/${clientId}?SAMLRequest=%%%`), /base64|well-formed|SAML/);
      await expectRefused(await browser.get(`${test.url}/samlp/${clientId}?SAMLRequest=${encodeURIComponent(Buffer.from('not deflate at all').toString('base64'))}`), /DEFLATE/);
      await expectRefused(await browser.post(`${test.url}/samlp/${clientId}`, { SAMLRequest: 'A'.repeat(200_000) }), /too large/);
      await expectRefused(await browser.get(redirectUrl(clientId, '<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_x" Version="2.0"/>')), /not an AuthnRequest/);
    });

    it('refuses an unknown application, a foreign ACS URL, an expired or replayed request', async () => {
      const browser = new TestBrowser();
      await expectRefused(await browser.get(redirectUrl('no-such-client', authnRequest())), /Unknown application/);
      const plain = (await createApp(test, { name: 'No SAML' })).client_id;
      await expectRefused(await browser.get(redirectUrl(plain, authnRequest())), /not set up for SAML/);
      await expectRefused(await browser.get(redirectUrl(clientId, authnRequest({ acs: 'https://evil.example/acs' }))), /ACS URL is not one of/);
      await expectRefused(await browser.get(redirectUrl(clientId, authnRequest({ instant: new Date(Date.now() - 3_600_000).toISOString() }))), /expired/);
      const once = redirectUrl(clientId, authnRequest({ id: '_replayed-request' }));
      expect((await browser.get(once)).status).toBe(302); // to the login page
      await expectRefused(await browser.get(once), /already used/);
    });
  });
});

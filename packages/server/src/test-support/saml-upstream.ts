/**
 * A SAML 2.0 identity provider for tests, built on samlify (a maintained SAML library that can act as IdP, unlike
 * @node-saml/node-saml, which is service-provider only and is what Gatehouse itself uses: two code bases, so the
 * tests are interop, not a library checking itself). It serves HTTP on 127.0.0.1: its SSO endpoint takes our
 * AuthnRequest in either binding, samlify parses it (and verifies its signature when our metadata says we sign),
 * and answers with a page that auto-posts a samlify-made, samlify-signed Response to our ACS. samlify learns our
 * entity ID, ACS and certificate from our own metadata (/samlp/metadata?connection=…).
 *
 * Who signs in: the test's driver adds `login` (or `abort`) to the SSO request, as a person would at a login page.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signingCertificate } from '../crypto/x509-certificates.js';
import type { UpstreamCallback, UpstreamDriver } from '../federation/strategy-contract.js';
import { readForm, type TestBrowser } from './sign-in.js';

interface SamlifyEntity {
  parseLoginRequest(sp: SamlifyEntity, binding: string, request: { query?: Record<string, string>; body?: Record<string, string>; octetString?: string }): Promise<{ extract: { request?: { id?: string } } }>;
  createLoginResponse(sp: SamlifyEntity, requestInfo: unknown, binding: string, user: Record<string, string>, replace?: (template: string) => { id: string; context: string }): Promise<{ context: string }>;
  parseLogoutRequest(sp: SamlifyEntity, binding: string, request: { query?: Record<string, string>; octetString?: string }): Promise<LogoutRequestInfo>;
  createLogoutResponse(sp: SamlifyEntity, requestInfo: unknown, binding: string, relayState: string, replace?: (template: string) => { id: string; context: string }): { context: string };
}
interface LogoutRequestInfo {
  extract: { request?: { id?: string }; nameID?: string };
}
/** samlify without its type declarations: they pull in the DOM library, which would change global types for every other file. */
const samlifyModule = 'samlify';
const xmllintModule = '@authenio/samlify-xmllint-wasm';
const xmllint = (await import(xmllintModule)) as { validate(xml: string): Promise<unknown> };
const samlify = (await import(samlifyModule)) as {
  setSchemaValidator(validator: { validate(xml: string): Promise<unknown> }): void;
  IdentityProvider(settings: Record<string, unknown>): SamlifyEntity;
  ServiceProvider(settings: Record<string, unknown>): SamlifyEntity;
  SamlLib: { replaceTagsByValue(template: string, values: Record<string, unknown>): string };
};
samlify.setSchemaValidator(xmllint);

export const EMAIL_CLAIM = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress';
export const NAME_CLAIM = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name';

/** How the next Response departs from a good one (for the refusal tests). */
export interface ResponseTweaks {
  /** Minutes from now of NotOnOrAfter (Conditions and SubjectConfirmationData); negative for an expired one. */
  expiresInMinutes?: number;
  audience?: string;
  /** Sign with another key under the same entity ID ('rogue'), or with the IdP's key but RSA-SHA1 ('sha1'). */
  signer?: 'rogue' | 'sha1';
}

export interface SamlUpstream {
  entityId: string;
  ssoUrl: string;
  certificatePem: string;
  /** Trusts our SP metadata for a connection (samlify reads it); `wantAssertionsSigned` makes the IdP sign the assertion instead of the Response. */
  trust(metadataXml: string, options?: { wantAssertionsSigned?: boolean; logoutBinding?: 'redirect' | 'post'; signLogoutResponses?: boolean }): void;
  /** The requests the IdP received, parsed by samlify: their ids, and whether their signature was checked. */
  received: { id: string | undefined; signed: boolean }[];
  /** Applied to the next Response only. */
  next: ResponseTweaks;
  /** Single logout: the IdP's SingleLogoutService (HTTP-Redirect), where our LogoutRequests arrive. */
  sloUrl: string;
  /** The LogoutRequests received, as samlify read them (their signature checked when the IdP wants them signed). */
  logoutRequests: { id: string | undefined; nameId: string | undefined; signed: boolean }[];
  /** The SessionIndex of each Response sent, by login. */
  sessionIndexes: Map<string, string>;
  /** How the next LogoutResponse departs from a good one. */
  nextLogout: { status?: string; inResponseTo?: string; signer?: 'rogue' };
  /** A Response for `login` without a request (IdP-initiated), to `acsUrl`. */
  unsolicited(login: string, tweaks?: ResponseTweaks): Promise<string>;
  driver: UpstreamDriver;
  close(): Promise<void>;
}

function escape(value: string): string {
  return value.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

function attributeStatement(attributes: Record<string, string>): string {
  const items = Object.entries(attributes)
    .map(([name, value]) => `<saml:Attribute Name="${escape(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:uri"><saml:AttributeValue xsi:type="xs:string">${escape(value)}</saml:AttributeValue></saml:Attribute>`)
    .join('');
  return `<saml:AttributeStatement>${items}</saml:AttributeStatement>`;
}

async function identityProvider(entityId: string, ssoUrl: string, wantAuthnRequestsSigned: boolean, privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, algorithm = 'rsa-sha256') {
  const certificatePem = await signingCertificate({ kid: randomBytes(8).toString('hex'), privateKey }, 'saml-idp.test');
  const idp = samlify.IdentityProvider({
    entityID: entityId,
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    signingCert: certificatePem,
    wantAuthnRequestsSigned,
    requestSignatureAlgorithm: algorithm === 'rsa-sha1' ? 'http://www.w3.org/2000/09/xmldsig#rsa-sha1' : 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    nameIDFormat: ['urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified'],
    singleSignOnService: [
      { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: ssoUrl },
      { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', Location: ssoUrl },
    ],
    singleLogoutService: [{ Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: ssoUrl.replace(/\/sso$/, '/slo') }],
    wantLogoutRequestSigned: wantAuthnRequestsSigned,
  });
  return { idp, certificatePem, privateKey };
}

export async function startSamlUpstream(options: { wantAuthnRequestsSigned?: boolean } = {}): Promise<SamlUpstream> {
  let sp: SamlifyEntity | undefined;
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const entityId = `${base}/metadata`;
  const ssoUrl = `${base}/sso`;
  const main = await identityProvider(entityId, ssoUrl, options.wantAuthnRequestsSigned ?? false);
  // Another key under the same name: what an attacker without the IdP's key could sign with.
  const rogue = await identityProvider(entityId, ssoUrl, false);
  // The IdP's own key, signing with SHA-1 (as old ADFS set-ups do).
  const sha1 = await identityProvider(entityId, ssoUrl, false, main.privateKey, 'rsa-sha1');
  const received: SamlUpstream['received'] = [];
  let next: ResponseTweaks = {};
  const logoutRequests: SamlUpstream['logoutRequests'] = [];
  const sessionIndexes = new Map<string, string>();
  let nextLogout: SamlUpstream['nextLogout'] = {};
  let logoutBinding: 'redirect' | 'post' = 'post';

  async function respond(requestInfo: { extract?: { request?: { id?: string } } }, login: string, tweaks: ResponseTweaks): Promise<string> {
    if (!sp) throw new Error('the IdP does not know the service provider yet (trust its metadata)');
    const signer = tweaks.signer === 'rogue' ? rogue.idp : tweaks.signer === 'sha1' ? sha1.idp : main.idp;
    const inResponseTo = requestInfo.extract?.request?.id;
    const response = await signer.createLoginResponse(sp, requestInfo, 'post', { email: login }, (template) => {
      const now = new Date();
      const end = new Date(now.getTime() + (tweaks.expiresInMinutes ?? 5) * 60_000).toISOString();
      const id = `_${randomBytes(16).toString('hex')}`;
      // Markup goes in before samlify's tag replacement, which XML-escapes every value it puts in.
      let context = template
        .replace(/\{AttributeStatement\}/, attributeStatement({ [EMAIL_CLAIM]: `${login}@upstream.example`, [NAME_CLAIM]: `${login} Upstream`, email_verified: 'true' }))
        .replace(
          /\{AuthnStatement\}/,
          `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="${id}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
        );
      // No request, no InResponseTo (SAML Profiles §4.1.5, unsolicited responses).
      if (!inResponseTo) context = context.replace(/ InResponseTo="\{InResponseTo\}"/g, '');
      const acs = /AssertionConsumerService[^>]*Location="([^"]+)"/.exec(metadataXml)![1]!.replace(/&amp;/g, '&');
      context = samlify.SamlLib.replaceTagsByValue(context, {
        ID: id,
        AssertionID: `_${randomBytes(16).toString('hex')}`,
        Destination: acs,
        Audience: tweaks.audience ?? spEntityId,
        SubjectRecipient: acs,
        Issuer: entityId,
        IssueInstant: now.toISOString(),
        StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
        ConditionsNotBefore: new Date(now.getTime() - 60_000).toISOString(),
        ConditionsNotOnOrAfter: end,
        SubjectConfirmationDataNotOnOrAfter: end,
        NameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
        NameID: login,
        InResponseTo: inResponseTo ?? '',
      });
      sessionIndexes.set(login, id);
      return { id, context };
    });
    return response.context;
  }

  let metadataXml = '';
  let spEntityId = '';

  server.on('request', (request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', base);
      if (url.pathname === '/slo') return singleLogout(url, response);
      let fields: Record<string, string>;
      let binding: 'redirect' | 'post';
      let octetString: string | undefined;
      if (request.method === 'POST') {
        let body = '';
        for await (const chunk of request) body += String(chunk);
        fields = Object.fromEntries(new URLSearchParams(body));
        binding = 'post';
      } else {
        fields = Object.fromEntries(url.searchParams);
        binding = 'redirect';
        // The signed octets of the Redirect binding, exactly as our query encodes them (SAML Bindings §3.4.4.1).
        const raw = new Map(url.search.slice(1).split('&').map((pair) => [pair.slice(0, pair.indexOf('=')), pair] as const));
        octetString = ['SAMLRequest', 'RelayState', 'SigAlg'].filter((n) => raw.has(n)).map((n) => raw.get(n)).join('&');
      }
      const relayState = fields.RelayState ?? '';
      const acs = /AssertionConsumerService[^>]*Location="([^"]+)"/.exec(metadataXml)?.[1]?.replace(/&amp;/g, '&') ?? '';
      let samlResponse: string;
      if (fields.abort) {
        // A real IdP's refusal: unsigned, a Responder status, no assertion.
        samlResponse = Buffer.from(
          `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_${randomBytes(8).toString('hex')}" Version="2.0" IssueInstant="${new Date().toISOString()}" Destination="${escape(acs)}"><saml:Issuer>${escape(entityId)}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Responder"><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:AuthnFailed"/></samlp:StatusCode><samlp:StatusMessage>The user cancelled</samlp:StatusMessage></samlp:Status></samlp:Response>`,
        ).toString('base64');
      } else {
        const requestInfo = await main.idp.parseLoginRequest(sp!, binding, binding === 'post' ? { body: fields } : { query: fields, octetString: octetString! });
        received.push({ id: requestInfo.extract.request?.id, signed: Boolean(fields.Signature) || /<ds:Signature|<Signature/.test(Buffer.from(fields.SAMLRequest ?? '', 'base64').toString('latin1')) });
        const tweaks = next;
        next = {};
        samlResponse = await respond(requestInfo, fields.login ?? 'nobody', tweaks);
      }
      const page = `<!doctype html><form method="post" action="${escape(acs)}"><input type="hidden" name="SAMLResponse" value="${escape(samlResponse)}"><input type="hidden" name="RelayState" value="${escape(relayState)}"></form>`;
      response.writeHead(200, { 'content-type': 'text/html' }).end(page);
    })().catch((error: unknown) => {
      response.writeHead(400, { 'content-type': 'text/plain' }).end(error instanceof Error ? error.message : String(error));
    });
  });

  /** Our LogoutRequest (HTTP-Redirect), read by samlify; its LogoutResponse sent back in the binding our metadata (as trusted) names. */
  async function singleLogout(url: URL, response: ServerResponse): Promise<void> {
    const fields = Object.fromEntries(url.searchParams);
    const raw = new Map(url.search.slice(1).split('&').map((pair) => [pair.slice(0, pair.indexOf('=')), pair] as const));
    const octetString = ['SAMLRequest', 'RelayState', 'SigAlg'].filter((n) => raw.has(n)).map((n) => raw.get(n)).join('&');
    const info = await main.idp.parseLogoutRequest(sp!, 'redirect', { query: fields, octetString });
    logoutRequests.push({ id: info.extract.request?.id, nameId: info.extract.nameID, signed: Boolean(fields.Signature) });
    const tweaks = nextLogout;
    nextLogout = {};
    const sloLocation = /SingleLogoutService[^>]*Location="([^"]+)"/.exec(metadataXml)![1]!.replace(/&amp;/g, '&');
    const replace = (template: string) => {
      const id = `_${randomBytes(16).toString('hex')}`;
      const context = samlify.SamlLib.replaceTagsByValue(template, {
        ID: id,
        Destination: sloLocation,
        Issuer: entityId,
        EntityID: entityId,
        IssueInstant: new Date().toISOString(),
        StatusCode: tweaks.status ?? 'urn:oasis:names:tc:SAML:2.0:status:Success',
        InResponseTo: tweaks.inResponseTo ?? info.extract.request?.id ?? '',
      });
      return { id, context };
    };
    const signer = tweaks.signer === 'rogue' ? rogue.idp : main.idp;
    const created = await signer.createLogoutResponse(sp!, info, logoutBinding, fields.RelayState ?? '', replace);
    if (logoutBinding === 'redirect') {
      response.writeHead(302, { location: created.context }).end();
      return;
    }
    const page = `<!doctype html><form method="post" action="${escape(sloLocation)}"><input type="hidden" name="SAMLResponse" value="${escape(created.context)}"><input type="hidden" name="RelayState" value="${escape(fields.RelayState ?? '')}"></form>`;
    response.writeHead(200, { 'content-type': 'text/html' }).end(page);
  }

  const driver: UpstreamDriver = {
    stateParameter: 'RelayState',
    async signIn(browser: TestBrowser, upstreamUrl: string, _returnTo: string, login: string | { abort: true }): Promise<UpstreamCallback> {
      const url = new URL(upstreamUrl);
      if (typeof login === 'string') url.searchParams.append('login', login);
      else url.searchParams.append('abort', '1');
      const page = await browser.get(url.href);
      const text = await page.text();
      if (page.status !== 200) throw new Error(`the IdP answered ${page.status}: ${text.slice(0, 300)}`);
      const form = readForm(text, base);
      return { url: new URL(form.action), form: form.fields };
    },
  };

  return {
    entityId,
    ssoUrl,
    sloUrl: `${base}/slo`,
    certificatePem: main.certificatePem,
    received,
    logoutRequests,
    sessionIndexes,
    get nextLogout() {
      return nextLogout;
    },
    set nextLogout(value: SamlUpstream['nextLogout']) {
      nextLogout = value;
    },
    get next() {
      return next;
    },
    set next(value: ResponseTweaks) {
      next = value;
    },
    trust(xml, trustOptions = {}) {
      metadataXml = trustOptions.wantAssertionsSigned ? xml.replace(/WantAssertionsSigned="false"/, 'WantAssertionsSigned="true"').replace(/<(\w+:)?SPSSODescriptor(?![^>]*WantAssertionsSigned)/, '<$1SPSSODescriptor WantAssertionsSigned="true"') : xml;
      logoutBinding = trustOptions.logoutBinding ?? 'post';
      if (logoutBinding === 'redirect') metadataXml = metadataXml.replace(/(<(?:\w+:)?SingleLogoutService[^>]*Binding=")[^"]+"/, '$1urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"');
      spEntityId = /entityID="([^"]+)"/.exec(metadataXml)![1]!;
      sp = samlify.ServiceProvider({ metadata: metadataXml, wantLogoutResponseSigned: trustOptions.signLogoutResponses ?? true });
    },
    unsolicited: (login, tweaks = {}) => respond({}, login, tweaks),
    driver,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

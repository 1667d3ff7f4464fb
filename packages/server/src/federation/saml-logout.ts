/**
 * SAML single logout toward an upstream identity provider (`/v2/logout?federated` for a user who signed in through
 * a samlp connection). Our session has already ended; the browser is sent to the IdP's SingleLogoutService with a
 * LogoutRequest naming the NameID and SessionIndex of the assertion we accepted (node-saml builds and, when the
 * connection signs its requests, signs it). The IdP answers at `/logout` with a LogoutResponse, read here under
 * saml-safety.ts (size, no DTD, UTF-8; node-saml's own redirect reader inflates without a bound and finds query
 * parameters by regular expression): InResponseTo must be the request we sent for this RelayState (stored,
 * answered once), a signature, when the IdP signs (a Signature parameter, or an enveloped one), must verify
 * with the connection's certificate and not be SHA-1. Then the browser goes where the logout was to go.
 */
import { X509Certificate } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { randomSecret } from '../crypto/ids.js';
import { sha256 } from '../login/session.js';
import type { Services } from '../services.js';
import type { Connection } from '../store/connections.js';
import { findSamlUpstreamSession, insertSamlUpstreamLogout } from '../store/saml-upstream-logout.js';
import { localParty } from './local-party.js';
import { decodePostMessage, decodeRedirectMessage, hasEnvelopedSignature, parseSamlXml, SAML_NS, SamlMessageError, singleChild, verifyEnvelopedSignature, verifyRedirectSignature } from './saml-safety.js';
import { idpCertificatePem, samlLogoutCallbackUrl, samlpStrategy, upstreamLogoutUrl } from './samlp.js';
import { openUpstream } from './secrets.js';

/** A person has this long at the IdP's logout before the answer is no longer taken. */
const LOGOUT_LIFETIME_MS = 10 * 60_000;
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';

/** The URL of the IdP's logout with our LogoutRequest, remembered for its answer; undefined when there is nothing to end there. */
export async function startSamlUpstreamLogout(services: Services, request: FastifyRequest, connection: Connection, userId: string, returnTo: string | undefined, now = Date.now()): Promise<URL | undefined> {
  const db = services.store.db;
  const session = await findSamlUpstreamSession(db, request.tenant.id, userId);
  if (!session || session.connection_id !== connection.id) return undefined;
  const relayState = randomSecret(32);
  const requestId = `_${randomSecret(32).replace(/[^A-Za-z0-9]/g, '')}`;
  const upstream = { ...openUpstream(samlpStrategy, services.sealer, connection, services.config.developmentKeys), local: localParty(request, services, connection) };
  const url = await upstreamLogoutUrl(upstream, { nameId: session.name_id, nameIdFormat: session.name_id_format ?? undefined, sessionIndex: session.session_index ?? undefined }, requestId, relayState);
  if (!url) return undefined;
  await insertSamlUpstreamLogout(db, {
    id: sha256(relayState),
    tenant_id: request.tenant.id,
    connection_id: connection.id,
    request_id: requestId,
    return_to: returnTo ?? null,
    expires_at: now + LOGOUT_LIFETIME_MS,
    created_at: now,
  });
  return url;
}

export interface LogoutAnswer {
  /** Whether the IdP says the session ended there (status Success). */
  success: boolean;
  /** The status code's last part (Success, Responder, PartialLogout…), for the log. */
  status: string;
}

export interface ReceivedLogoutResponse {
  binding: 'redirect' | 'post';
  /** The SAMLResponse parameter as received. */
  encoded: string;
  /** Redirect binding: the raw query, which a signature covers. */
  rawQuery: string;
  /** Redirect binding: whether a Signature parameter came. */
  redirectSigned: boolean;
}

/** Reads and checks the IdP's LogoutResponse to the request `expectedId`; throws SamlMessageError when it cannot be trusted. */
export function readLogoutResponse(message: ReceivedLogoutResponse, connection: Connection, baseUrl: string, expectedId: string): LogoutAnswer {
  const xml = message.binding === 'redirect' ? decodeRedirectMessage(message.encoded) : decodePostMessage(message.encoded);
  const document = parseSamlXml(xml);
  const root = document.documentElement!;
  if (root.namespaceURI !== SAML_NS.protocol || root.localName !== 'LogoutResponse') throw new SamlMessageError('The SAML message is not a LogoutResponse.');
  const pem = idpCertificatePem(connection.options);
  if (!pem) throw new SamlMessageError('The connection has no certificate to check the identity provider with.');
  const certificate = new X509Certificate(pem);
  if (message.binding === 'redirect') {
    if (message.redirectSigned) verifyRedirectSignature(message.rawQuery, 'SAMLResponse', certificate);
    else if (hasEnvelopedSignature(document)) throw new SamlMessageError('A LogoutResponse by HTTP-Redirect is signed in the query, not in the XML.');
  } else if (hasEnvelopedSignature(document)) {
    verifyEnvelopedSignature(xml, document, certificate);
  }
  if (root.getAttribute('InResponseTo') !== expectedId) throw new SamlMessageError('The LogoutResponse does not answer this logout (InResponseTo).');
  const destination = root.getAttribute('Destination');
  if (destination && destination !== samlLogoutCallbackUrl(baseUrl)) throw new SamlMessageError('The LogoutResponse is addressed to another service (Destination).');
  const status = singleChild(root, SAML_NS.protocol, 'Status');
  const code = (status && singleChild(status, SAML_NS.protocol, 'StatusCode')?.getAttribute('Value')) ?? '';
  return { success: code === SUCCESS, status: code.split(':').pop()?.slice(0, 64) || 'none' };
}

/**
 * Finishing a SAML sign-in: the same SSO session, hosted login and second factor as OpenID Connect
 * (auth-api/authorize/complete.ts), then a signed Response posted to the ACS URL by an auto-submitting form.
 * Called when the AuthnRequest arrives and, after each hosted page, by /authorize/resume.
 */
import { presentIdentities } from '../../management/user-view.js';
import { findConnectionById } from '../../store/connections.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { signingCertificate } from '../../crypto/x509-certificates.js';
import { InvalidRequest } from '../../http/errors.js';
import { sendErrorPage } from '../../login/error-page.js';
import { sendHostedPage } from '../../login/hosted-page.js';
import { renderFormPost } from '../../login/pages/form-post.js';
import { currentSession, sessionAmr } from '../../login/session.js';
import { createLoginTransaction, finishLoginTransaction, type LoginTransaction } from '../../login/transactions.js';
import { requireSecondFactor, secondFactorDue } from '../../mfa/login-step.js';
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import { recordSamlParticipant } from '../../store/saml-sessions.js';
import type { Tenant } from '../../store/tenants.js';
import { LOGIN_PATH, MFA_PATH } from '../authorize/complete.js';
import type { AuthorizationRequest, SamlSignIn } from '../authorize/request.js';
import { samlSettings, type SamlSettings } from './addon.js';
import { buildSamlErrorResponse, buildSamlResponse, sessionIndex, subjectName } from './assertion.js';

/** Our entity ID as this application knows it: the add-on's `issuer`, else `urn:<tenant host>` as the reference names it. */
export function idpEntityId(tenant: Tenant, settings: Pick<SamlSettings, 'issuer'> | undefined): string {
  return settings?.issuer ?? `urn:${new URL(tenant.baseUrl).host}`;
}

/** The certificate subject: the tenant's host. */
export function certificateSubject(tenant: Tenant): string {
  return new URL(tenant.baseUrl).host;
}

export interface SamlContinuation {
  client: Client;
  request: AuthorizationRequest & { saml: SamlSignIn };
  transaction?: LoginTransaction;
  afterPost?: boolean;
}

/** Posts a SAML message to the service provider with the auto-submitting form page. */
export function postToServiceProvider(reply: FastifyReply, tenant: Tenant, action: string, fields: Record<string, string>): FastifyReply {
  return sendHostedPage(reply, tenant, () => renderFormPost({ action, fields }), { formAction: [action] });
}

export async function continueSamlSignIn(httpRequest: FastifyRequest, reply: FastifyReply, services: Services, continuation: SamlContinuation): Promise<FastifyReply> {
  const { client, request } = continuation;
  const { saml } = request;
  const tenant = httpRequest.tenant;
  const settings = samlSettings(client);
  if (!settings) return sendErrorPage(reply, httpRequest, new InvalidRequest('This application is not set up for SAML (addons.samlp).', 'invalid_client'));
  const key = await services.keyRing.signingKey(tenant.id);
  const signer = { issuer: idpEntityId(tenant, settings), acsUrl: saml.acsUrl, audience: saml.audience, settings, key, certificatePem: await signingCertificate(key, certificateSubject(tenant)), ...(saml.requestId !== undefined && { inResponseTo: saml.requestId }) };
  const relay: Record<string, string> = saml.relayState !== undefined ? { RelayState: saml.relayState } : {};
  const redirectStatus = continuation.afterPost ? 303 : 302;

  const active = await currentSession(httpRequest, services);
  if (!active || request.prompt.includes('login')) {
    // IsPassive: the service provider asked us not to show anything (SAML Core §3.4.1).
    if (saml.isPassive) {
      return postToServiceProvider(reply, tenant, saml.acsUrl, { SAMLResponse: Buffer.from(buildSamlErrorResponse(signer, 'urn:oasis:names:tc:SAML:2.0:status:NoPassive', 'The user is not signed in')).toString('base64'), ...relay });
    }
    const transaction = continuation.transaction ?? (await createLoginTransaction(httpRequest, reply, services, request));
    return reply.redirect(`${LOGIN_PATH}?state=${transaction.id}`, redirectStatus);
  }
  const amr = sessionAmr(active.session);
  if (!amr.includes('mfa') && (await secondFactorDue(httpRequest, services, tenant, active.user.user_id, undefined))) {
    const transaction = continuation.transaction ?? (await createLoginTransaction(httpRequest, reply, services, request));
    await requireSecondFactor(services, tenant.id, active.user.user_id, transaction.id, amr);
    return reply.redirect(`${MFA_PATH}?state=${transaction.id}`, redirectStatus);
  }
  // A transaction completes once: a second resume (double submit, back button) does not answer twice.
  if (continuation.transaction && !(await finishLoginTransaction(services, continuation.transaction))) {
    return sendErrorPage(reply, httpRequest, new InvalidRequest('This sign-in was already completed. Go back to the application and start again.'));
  }
  const nameId = await subjectName(services.store.db, { tenantId: tenant.id, clientId: client.client_id, audience: saml.audience, settings, user: active.user });
  const connection = settings.mapIdentities ? await findConnectionById(services.store.db, tenant.id, active.user.connection_id) : undefined;
  // The primary identity as the Management API shows it (provider, connection, isSocial, user_id).
  const identity = connection ? presentIdentities(active.user, [], { connections: new Map([[connection.id, connection]]) })[0] : undefined;
  const xml = buildSamlResponse({ ...signer, user: active.user, session: active.session, nameId, ...(identity && { identity }) });
  // A session participant now: a logout elsewhere sends this application a LogoutRequest for this NameID.
  await recordSamlParticipant(services.store.db, {
    session_id: active.session.id,
    tenant_id: tenant.id,
    client_id: client.client_id,
    name_id: nameId.value,
    name_id_format: settings.nameIdentifierFormat,
    sp_name_qualifier: nameId.spNameQualifier ?? null,
    session_index: sessionIndex(active.session),
    created_at: Date.now(),
    expires_at: active.session.expires_at,
  });
  httpRequest.log.info({ client_id: client.client_id }, 'SAML response sent');
  return postToServiceProvider(reply, tenant, saml.acsUrl, { SAMLResponse: Buffer.from(xml, 'utf8').toString('base64'), ...relay });
}

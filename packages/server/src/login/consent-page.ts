/**
 * GET/POST /u/consent: a third-party application asks the signed-in user for scopes. Accepting records the
 * consent (so the next request for the same scopes skips this page); declining answers the application with
 * access_denied.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONSENT_PATH, RESUME_PATH, sendAuthorizationError } from '../auth-api/authorize/complete.js';
import { AccessDenied } from '../auth-api/errors.js';
import { resolveUserScopes } from '../auth-api/user-tokens/scopes.js';
import type { App, Services } from '../services.js';
import { recordConsent } from '../store/user-consents.js';
import { sendHostedPage } from './hosted-page.js';
import { htmlPage, redirect } from '../http/responses.js';
import { formFields, PAGE_TAGS, STALE_STEP, STATE_QUERY, TO_RESUME } from './documentation.js';
import { renderConsentPage } from './pages/consent.js';
import { currentSession } from './session.js';
import { finishLoginTransaction, saveLoginTransactionRequest } from './transactions.js';
import { formBody, loadStep, type LoginStep } from './step.js';

const OIDC_SCOPE_DESCRIPTIONS: Record<string, string> = {
  openid: 'Confirm who you are',
  profile: 'Your profile: name, nickname and picture',
  email: 'Your email address',
  offline_access: 'Keep access while you are not using it',
};

async function describe(services: Services, tenantId: string, audience: string | null, scopes: string[]): Promise<{ name: string; description: string }[]> {
  const api = audience ? await services.configCache.resourceServer(tenantId, audience) : undefined;
  return scopes.map((name) => ({
    name,
    description: OIDC_SCOPE_DESCRIPTIONS[name] ?? api?.scopes.find((s) => s.value === name)?.description ?? name,
  }));
}

/** The signed-in user and what they are asked to grant; without a session the user goes back to log in. */
async function pending(request: FastifyRequest, services: Services, step: LoginStep) {
  const active = await currentSession(request, services);
  if (!active) return undefined;
  const { transaction, client } = step;
  const granted = await resolveUserScopes(services, { tenant: request.tenant, client, user: active.user, requestedScope: transaction.request.scope, audience: transaction.request.audience ?? null });
  return { active, ...granted };
}

export function registerConsentPage(app: App, services: Services): void {
  app.get(CONSENT_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'The consent page (third-party applications)',
      ...STATE_QUERY,
      response: { 200: htmlPage('What the application asks for, to accept or decline'), 302: TO_RESUME, 400: STALE_STEP },
    },
  }, async (request, reply) => {
    const step = await loadStep(request, reply, services, 'GET');
    if (!step) return reply;
    const asked = await pending(request, services, step);
    if (!asked) return reply.redirect(`${RESUME_PATH}?state=${step.transaction.id}`, 302);
    const api = asked.audience ? await services.configCache.resourceServer(request.tenant.id, asked.audience) : undefined;
    const scopes = await describe(services, request.tenant.id, asked.audience, asked.scopes);
    const user = asked.active.user;
    return sendHostedPage(reply, request.tenant, (context) =>
      renderConsentPage(context, {
        action: CONSENT_PATH,
        csrfToken: step.transaction.csrfToken,
        transaction: step.transaction.id,
        clientName: step.client.name,
        ...(step.client.logo_uri ? { clientLogoUrl: step.client.logo_uri } : {}),
        userLabel: user.email ?? user.username ?? user.user_id,
        ...(api ? { audienceName: api.name } : {}),
        scopes,
      }),
      { formAction: [step.transaction.request.redirectUri] },
    );
  });

  app.post(CONSENT_PATH, {
    config: { rateLimit: { bucket: 'login' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'Accept or decline what the application asks for',
      ...formFields({ decision: '`accept`; anything else declines' }),
      response: {
        200: htmlPage("Declined, in form_post or web_message mode: the page that delivers access_denied to the application"),
        303: redirect("Accepted (or nothing left to ask): to /authorize/resume; declined: to the application's redirect URI with access_denied"),
        400: STALE_STEP,
      },
    },
  }, async (request, reply: FastifyReply) => {
    const step = await loadStep(request, reply, services, 'POST');
    if (!step) return reply;
    const { transaction, client } = step;
    const asked = await pending(request, services, step);
    if (!asked) return reply.redirect(`${RESUME_PATH}?state=${transaction.id}`, 303);
    if (formBody(request).decision !== 'accept') {
      await finishLoginTransaction(services, transaction);
      return sendAuthorizationError(reply, request, client, transaction.request, new AccessDenied('User did not authorize the request'), true);
    }
    await recordConsent(services.store.db, request.tenant.id, asked.active.user.user_id, client.client_id, asked.audience ?? '', asked.scopes);
    transaction.request = { ...transaction.request, prompt: transaction.request.prompt.filter((p) => p !== 'consent') };
    await saveLoginTransactionRequest(services, transaction);
    return reply.redirect(`${RESUME_PATH}?state=${transaction.id}`, 303);
  });
}

/**
 * Finishing an authorization request once the checks passed: use the SSO session if it satisfies the request
 * (prompt, max_age, connection), else send the user to the hosted login (or answer `login_required` when
 * `prompt=none`); ask third-party clients' users for consent; then issue the code and/or tokens and deliver
 * them in the response mode. Called by /authorize and, after each hosted page, by /authorize/resume.
 */
import { recordSessionClient } from '../backchannel-logout/queue.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ProtocolError } from '../../http/errors.js';
import { currentSession, sessionAmr, type ActiveSession } from '../../login/session.js';
import { requireSecondFactor, secondFactorDue } from '../../mfa/login-step.js';
import { createLoginTransaction, finishLoginTransaction, type LoginTransaction } from '../../login/transactions.js';
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import { findConnectionByName, type Connection } from '../../store/connections.js';
import { signedInWithDevelopmentKeys } from '../../federation/silent-authentication.js';
import { isFederated, redirectUpstream } from '../../federation/start.js';
import { consentedScopes } from '../../store/user-consents.js';
import { ConsentRequired, InteractionRequired, LoginRequired } from '../errors.js';
import type { UserAuthorization } from '../user-tokens/authorization.js';
import { createAuthorizationCode } from '../user-tokens/authorization-code.js';
import { issueUserTokens } from '../user-tokens/issue.js';
import { resolveUserScopes } from '../user-tokens/scopes.js';
import { returnsAccessToken, returnsCode, returnsIdToken, type AuthorizationRequest } from './request.js';
import { sendAuthorizationResponse } from './respond.js';

export const LOGIN_PATH = '/u/login';
export const SIGNUP_PATH = '/u/signup';
export const CONSENT_PATH = '/u/consent';
export const RESUME_PATH = '/authorize/resume';
export const MFA_PATH = '/u/mfa';

/** Does the session answer this request without asking the user to log in again? */
function sessionSatisfies(active: ActiveSession, request: AuthorizationRequest, connectionId: string | undefined, now: number): boolean {
  if (request.prompt.includes('login')) return false;
  if (request.maxAge !== undefined && now - active.session.authenticated_at > request.maxAge * 1000) return false;
  if (connectionId !== undefined && active.user.connection_id !== connectionId) return false;
  return true;
}

async function connectionOf(services: Services, tenantId: string, name: string | undefined): Promise<Connection | undefined> {
  if (!name) return undefined;
  return findConnectionByName(services.store.db, tenantId, name);
}

export interface Continuation {
  client: Client;
  request: AuthorizationRequest;
  /** Present once the user has been on a hosted page. */
  transaction?: LoginTransaction;
  /** The response follows a form POST: redirect with 303. */
  afterPost?: boolean;
  /** A session this very request started (a login ticket): its cookie is not in the request yet. */
  session?: ActiveSession;
}

export async function continueAuthorization(httpRequest: FastifyRequest, reply: FastifyReply, services: Services, continuation: Continuation): Promise<FastifyReply> {
  const { client, request } = continuation;
  const tenant = httpRequest.tenant;
  try {
    const now = Date.now();
    const active = continuation.session ?? (await currentSession(httpRequest, services, now));
    const connection = await connectionOf(services, tenant.id, request.connection);
    if (active && request.prompt.includes('none') && (await signedInWithDevelopmentKeys(services, tenant.id, active.user))) {
      throw new LoginRequired('The session is from a social connection that uses development keys: sign in interactively');
    }
    if (!active || !sessionSatisfies(active, request, connection?.id, now)) {
      if (request.prompt.includes('none')) throw new LoginRequired();
      const transaction = continuation.transaction ?? (await createLoginTransaction(httpRequest, reply, services, request));
      // An upstream identity provider's connection: straight there, no hosted page.
      if (connection && isFederated(connection)) return await redirectUpstream(httpRequest, reply, services, transaction, connection, continuation.afterPost ?? false);
      const page = request.screenHint === 'signup' ? SIGNUP_PATH : LOGIN_PATH;
      return reply.redirect(`${page}?state=${transaction.id}`, continuation.afterPost ? 303 : 302);
    }

    // A session from a first factor alone (a signup, a passwordless code, a login ticket, or one started before
    // the policy changed) owes the second factor the policy requires before it can authorize anything; so does
    // any session without one when the application asks for it (acr_values, step-up: mfa/policy.ts).
    const amr = sessionAmr(active.session);
    if (!amr.includes('mfa') && (await secondFactorDue(httpRequest, services, tenant, active.user.user_id, request.acrValues))) {
      if (request.prompt.includes('none')) throw new InteractionRequired('Multifactor authentication required');
      const transaction = continuation.transaction ?? (await createLoginTransaction(httpRequest, reply, services, request));
      await requireSecondFactor(services, tenant.id, active.user.user_id, transaction.id, amr);
      return reply.redirect(`${MFA_PATH}?state=${transaction.id}`, continuation.afterPost ? 303 : 302);
    }

    const { scopes, audience } = await resolveUserScopes(services, { tenant, client, user: active.user, requestedScope: request.scope, audience: request.audience ?? null });
    if (!client.is_first_party) {
      const consented = await consentedScopes(services.store.db, tenant.id, active.user.user_id, client.client_id, audience ?? '');
      const missing = scopes.filter((s) => !consented.includes(s));
      if (missing.length > 0 || request.prompt.includes('consent')) {
        if (request.prompt.includes('none')) throw new ConsentRequired();
        const transaction = continuation.transaction ?? (await createLoginTransaction(httpRequest, reply, services, request));
        return reply.redirect(`${CONSENT_PATH}?state=${transaction.id}`, continuation.afterPost ? 303 : 302);
      }
    }

    // A transaction completes once: a second resume (double submit, back button) does not issue twice.
    if (continuation.transaction && !(await finishLoginTransaction(services, continuation.transaction))) throw new LoginRequired('This login was already completed');

    const authorization: UserAuthorization = {
      tenant,
      client,
      user: active.user,
      scopes,
      audience,
      ...(request.nonce !== undefined ? { nonce: request.nonce } : {}),
      authTime: Math.floor(active.session.authenticated_at / 1000),
      sessionId: active.session.id,
      ...(amr.length > 0 && { amr }),
    };
    const code = returnsCode(request)
      ? await createAuthorizationCode(services, authorization, {
          redirectUri: request.redirectUri,
          ...(request.codeChallenge ? { codeChallenge: request.codeChallenge, codeChallengeMethod: 'S256' as const } : {}),
          ...(request.dpopJkt !== undefined && { dpopJkt: request.dpopJkt }),
        })
      : undefined;
    // Back-channel logout (§2.3): the session now has this client among those to tell when it ends.
    await recordSessionClient(services.store.db, tenant.id, active.session.id, client.client_id, now);
    const wantAccess = returnsAccessToken(request);
    const wantId = returnsIdToken(request);
    const tokens =
      wantAccess || wantId
        ? await issueUserTokens(services, authorization, { accessToken: wantAccess, idToken: wantId, refreshToken: false, ...(code ? { code } : {}) })
        : undefined;
    return sendAuthorizationResponse(
      reply,
      tenant,
      client,
      request,
      {
        code,
        access_token: tokens?.access_token,
        token_type: tokens?.access_token ? 'Bearer' : undefined,
        expires_in: tokens?.access_token ? tokens.expires_in : undefined,
        scope: tokens?.access_token ? tokens.scope : undefined,
        id_token: tokens?.id_token,
      },
      { afterPost: continuation.afterPost ?? false },
    );
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return sendAuthorizationError(reply, httpRequest, client, request, error, continuation.afterPost ?? false);
  }
}

/** An error delivered to the client (the redirect URI is known to be registered by now). */
export function sendAuthorizationError(
  reply: FastifyReply,
  httpRequest: FastifyRequest,
  client: Client,
  request: Pick<AuthorizationRequest, 'redirectUri' | 'responseMode' | 'state'>,
  error: ProtocolError,
  afterPost: boolean,
): FastifyReply {
  httpRequest.log.info({ error: error.code }, 'authorization request answered with an error');
  return sendAuthorizationResponse(reply, httpRequest.tenant, client, request, { error: error.code, error_description: error.description }, { afterPost });
}

/**
 * The log event of a POST /oauth/token, by grant: `seccft`/`feccft` (client credentials), `seacft`/`feacft`
 * (authorization code), `sertft`/`fertft` (refresh token), `sepft`/`fepft` (the password grants), `s`/`f` (a
 * passwordless one-time code), `seotpft`/`seoobft`/`sercft` and their failures (the MFA API's grants). A failure a deeper layer already logged by its kind (`fp`, `limit_wc`, …) is not
 * logged twice. The request body is never copied: the event carries the client, user, audience and the scope
 * granted, and on failure the OAuth error code and description, which never contain a secret.
 */
import type { FastifyRequest } from 'fastify';
import { ProtocolError } from '../http/errors.js';
import type { Services } from '../services.js';
import type { LogEventType } from './catalogue.js';
import { notesForLog } from './request-notes.js';
import { observe } from '../metrics/registry.js';

const EXCHANGE_CODES: Record<string, [success: LogEventType, failure: LogEventType]> = {
  client_credentials: ['seccft', 'feccft'],
  authorization_code: ['seacft', 'feacft'],
  refresh_token: ['sertft', 'fertft'],
  password: ['sepft', 'fepft'],
  'http://auth0.com/oauth/grant-type/password-realm': ['sepft', 'fepft'],
  'http://auth0.com/oauth/grant-type/passwordless/otp': ['s', 'f'],
  'http://auth0.com/oauth/grant-type/mfa-otp': ['seotpft', 'feotpft'],
  'http://auth0.com/oauth/grant-type/mfa-oob': ['seoobft', 'feoobft'],
  'http://auth0.com/oauth/grant-type/mfa-recovery-code': ['sercft', 'fercft'],
};

export function recordTokenExchange(
  services: Services,
  request: FastifyRequest,
  grantType: string,
  outcome: { ok: true; scope: string | undefined; audience: string | undefined } | { ok: false; error: unknown },
): void {
  const codes = Object.hasOwn(EXCHANGE_CODES, grantType) ? EXCHANGE_CODES[grantType] : undefined;
  if (!codes) return;
  observe.tokenExchange(grantType, outcome.ok);
  const notes = notesForLog(request);
  const { outcomeLogged, ...facts } = notes;
  if (outcome.ok) {
    services.tenantLogs.recordFor(request, { ...facts, type: codes[0], scope: outcome.scope, audience: outcome.audience ?? facts.audience });
    return;
  }
  if (outcomeLogged) return;
  const error = outcome.error;
  const known = error instanceof ProtocolError;
  services.tenantLogs.recordFor(request, {
    ...facts,
    type: codes[1],
    description: known ? error.message.slice(0, 500) : 'Internal error',
    details: { error: known ? error.code : 'server_error' },
  });
}

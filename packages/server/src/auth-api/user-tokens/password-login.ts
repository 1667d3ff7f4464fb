/**
 * The resource-owner password grants (`password`, `…/password-realm`) after client authentication: check the
 * credentials against a database connection enabled for the client, then issue tokens for the scopes the user
 * may grant. Failures use the reference's answers: 403 invalid_grant "Wrong email or password." for any wrong
 * identifier or password (which never says which), 401 unauthorized "user is blocked"; and attack protection's
 * 429 too_many_attempts (brute-force block or throttled IP) and 401 password_leaked (protection/errors.ts); and,
 * where the tenant requires MFA, 403 mfa_required with an `mfa_token` for the MFA API.
 */
import type { FastifyRequest } from 'fastify';
import { authenticateWithPassword, databaseConnectionFor } from '../../connections/database-users.js';
import { InvalidRequest } from '../../http/errors.js';
import { recordPasswordLogin } from '../../logs/login-outcomes.js';
import { PasswordLeaked, TooManyAttempts } from '../../protection/errors.js';
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import type { Tenant } from '../../store/tenants.js';
import type { Confirmation } from '../sender-constraint.js';
import type { IssuedUserTokens, UserAuthorization } from './authorization.js';
import { mfaRequired } from '../../mfa/policy.js';
import { issueMfaToken } from '../mfa/mfa-token.js';
import { MfaRequired, UserBlocked, WrongCredentials } from './errors.js';
import { issueWithPlan, planIssue } from './issue.js';
import { resolveUserScopes } from './scopes.js';

export interface PasswordLoginRequest {
  tenant: Tenant;
  client: Client;
  /** The connection to log in with; for `password` the tenant's default directory. */
  connectionName: string;
  /** How the caller names a connection that is missing or not enabled for the client. */
  unusableConnection: string;
  username: string;
  password: string;
  scope: string | undefined;
  audience: string | undefined;
  /** What the request binds the tokens to (sender-constraint.ts senderConstraint). */
  confirmation: Confirmation;
}

export async function passwordLogin(services: Services, request: FastifyRequest, login: PasswordLoginRequest): Promise<IssuedUserTokens> {
  const { tenant, client } = login;
  const connection = await databaseConnectionFor(services, tenant, client.client_id, login.connectionName);
  if (!connection) throw new InvalidRequest(login.unusableConnection);
  const result = await authenticateWithPassword(services, connection, login.username, login.password, request.ip);
  // The grant writes its own `sepft` on success (auth-api/token/index.ts); failures are logged by their kind here.
  recordPasswordLogin(services, { request, client: { client_id: client.client_id, name: client.name }, connection, identifier: login.username, success: null }, result);
  if (result.outcome === 'wrong_credentials') throw new WrongCredentials();
  if (result.outcome === 'blocked') throw new UserBlocked();
  if (result.outcome === 'too_many_attempts') throw new TooManyAttempts(result.reason);
  if (result.outcome === 'password_leaked') throw new PasswordLeaked();
  const { user } = result;
  const audience = login.audience || tenant.settings.default_audience || null;
  // Only after the password was right, as the reference answers: the password alone issues nothing but an
  // mfa_token, with which the client goes on through the MFA API (auth-api/mfa/). One insert.
  if (mfaRequired(tenant)) throw new MfaRequired(await issueMfaToken(services, tenant, client, user, { amr: ['pwd'], scope: login.scope, audience: login.audience || null }));
  const { scopes, audience: granted } = await resolveUserScopes(services, { tenant, client, user, requestedScope: login.scope ?? '', audience });
  const authorization: UserAuthorization = { tenant, client, user, scopes, audience: granted, authTime: Math.floor(Date.now() / 1000), confirmation: login.confirmation };
  return (await issueWithPlan(services, authorization, { accessToken: true, idToken: true, refreshToken: true, grantType: 'password' }, planIssue())).tokens;
}

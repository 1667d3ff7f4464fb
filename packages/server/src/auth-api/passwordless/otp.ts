/**
 * Logging in with a passwordless one-time code, for every way of completing it with a code: the
 * `passwordless/otp` grant at /oauth/token and /co/authenticate with `credential_type …/passwordless/otp`.
 * The code is used up on success. Callers map the outcomes to their own error shapes:
 *  - `wrong_code`: no code pending for the identifier, a wrong one, or an unknown connection (never says which);
 *  - `expired`: the code is past its 5 minutes, or its 3 attempts are spent: ask for a new one;
 *  - `blocked`: the code was right but the user is blocked;
 *  - `signup_disabled`: the code was right, no such user, and the connection does not allow signups.
 */
import type { EventContext } from '../../events/outbox.js';
import type { Services } from '../../services.js';
import { findConnectionByName } from '../../store/connections.js';
import type { Tenant } from '../../store/tenants.js';
import type { User } from '../../store/users.js';
import { checkOneTimeCode, isPasswordless, normalizeIdentifier, passwordlessUser } from './codes.js';

export type PasswordlessOtpOutcome =
  | { outcome: 'ok'; user: User }
  | { outcome: 'wrong_code' }
  | { outcome: 'expired' }
  | { outcome: 'blocked' }
  | { outcome: 'signup_disabled' };

export interface PasswordlessOtpOptions {
  /** When given, a code asked for by another client is refused. */
  clientId?: string;
  /** The end user's IP, recorded as the login's. */
  ip?: string | null;
  /** Where a `user.created` event comes from. */
  event?: EventContext;
  /** Tests move the clock instead of waiting five minutes. */
  now?: number;
}

export async function verifyPasswordlessOtp(
  services: Services,
  tenant: Tenant,
  input: { connection: string; username: string; otp: string },
  options: PasswordlessOtpOptions = {},
): Promise<PasswordlessOtpOutcome> {
  const connection = input.connection.length <= 128 ? await findConnectionByName(services.store.db, tenant.id, input.connection) : undefined;
  if (!connection || !isPasswordless(connection)) return { outcome: 'wrong_code' };
  const identifier = normalizeIdentifier(connection.strategy, input.username);
  if (!identifier) return { outcome: 'wrong_code' };
  const check = await checkOneTimeCode(services, connection, identifier, input.otp.trim(), {
    consume: true,
    ...(options.clientId !== undefined && { clientId: options.clientId }),
    ...(options.now !== undefined && { now: options.now }),
  });
  if (check.outcome !== 'ok') return check;
  return passwordlessUser(services, connection, identifier, {
    ...(options.ip !== undefined && { ip: options.ip }),
    ...(options.event && { event: options.event }),
    ...(options.now !== undefined && { now: options.now }),
  });
}

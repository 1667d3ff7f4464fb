/**
 * Attack-protection checks for the doors other than password login (which authenticateWithPassword runs itself):
 * signup (hosted page, /dbconnections/signup) and password change (reset page, Management API).
 */
import type { Services } from '../services.js';
import type { Connection } from '../store/connections.js';

/** `password_leaked` when the tenant blocks breached passwords at signup and this one is breached. */
export async function checkBreachedPasswordAtSignup(services: Pick<Services, 'attackProtection'>, connection: Connection, password: string): Promise<'ok' | 'password_leaked'> {
  return (await services.attackProtection.passwordLeaked(connection.tenant_id, password, 'pre-user-registration')) ? 'password_leaked' : 'ok';
}

/** `password_leaked` when the tenant blocks breached passwords at password change and this one is breached. */
export async function checkBreachedPasswordAtPasswordChange(services: Pick<Services, 'attackProtection'>, connection: Connection, password: string): Promise<'ok' | 'password_leaked'> {
  return (await services.attackProtection.passwordLeaked(connection.tenant_id, password, 'pre-change-password')) ? 'password_leaked' : 'ok';
}

/**
 * Counts one signup attempt from `ip` (suspicious-IP throttling, pre-user-registration stage): `too_many_attempts`
 * once the IP has used up its signups. Call it once per attempt, before the user is created.
 */
export async function checkSignupThrottle(services: Pick<Services, 'attackProtection'>, connection: Connection, ip: string | null): Promise<'ok' | 'too_many_attempts'> {
  return (await services.attackProtection.checkSignup(connection.tenant_id, ip)) ? 'too_many_attempts' : 'ok';
}

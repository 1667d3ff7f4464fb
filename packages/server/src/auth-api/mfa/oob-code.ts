/**
 * The `oob_code` of an email challenge: names the mfa_token's challenge (whose row holds the emailed code's hash),
 * sealed so that it cannot be made up, and checked against the mfa_token it comes with at the mfa-oob grant.
 */
import type { Services } from '../../services.js';
import type { Tenant } from '../../store/tenants.js';
import type { MfaTokenClaims } from './mfa-token.js';

const sealContext = (tenantId: string) => `mfa-oob-code:${tenantId}`;

export function sealOobCode(services: Pick<Services, 'sealer'>, tenant: Tenant, claims: MfaTokenClaims): string {
  return services.sealer.seal(JSON.stringify({ id: claims.id, channel: 'email' }), sealContext(tenant.id));
}

/** Whether `oobCode` is an oob_code issued for this mfa_token's challenge. */
export function oobCodeMatches(services: Pick<Services, 'sealer'>, tenant: Tenant, claims: MfaTokenClaims, oobCode: string): boolean {
  try {
    const opened = JSON.parse(services.sealer.unseal(oobCode, sealContext(tenant.id))) as { id?: unknown };
    return opened.id === claims.id;
  } catch {
    return false;
  }
}

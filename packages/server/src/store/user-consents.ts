/** What users consented to for third-party clients, per API (audience '' = OIDC scopes only). */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export async function consentedScopes(db: Kysely<Database>, tenantId: string, userId: string, clientId: string, audience: string): Promise<string[]> {
  const row = await db
    .selectFrom('user_consents')
    .select('scopes')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('client_id', '=', clientId)
    .where('audience', '=', audience)
    .executeTakeFirst();
  return row ? (JSON.parse(row.scopes) as string[]) : [];
}

/** Adds `scopes` to what the user already consented to (consent only grows until revoked). */
export async function recordConsent(db: Kysely<Database>, tenantId: string, userId: string, clientId: string, audience: string, scopes: readonly string[], now = Date.now()): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const current = await consentedScopes(trx, tenantId, userId, clientId, audience);
    const merged = JSON.stringify([...new Set([...current, ...scopes])]);
    await trx
      .insertInto('user_consents')
      .values({ tenant_id: tenantId, user_id: userId, client_id: clientId, audience, scopes: merged, created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['tenant_id', 'user_id', 'client_id', 'audience']).doUpdateSet({ scopes: merged, updated_at: now }))
      .execute();
  });
}

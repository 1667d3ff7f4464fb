/** Which local user an upstream subject of a connection is (federated_identities, 0025), with the upstream's tokens, sealed. */
import type { Kysely } from 'kysely';
import type { Database, FederatedIdentitiesTable } from './schema.js';

export type FederatedIdentityRow = FederatedIdentitiesTable;

export async function findFederatedIdentity(db: Kysely<Database>, connectionId: string, subject: string): Promise<FederatedIdentityRow | undefined> {
  return db.selectFrom('federated_identities').selectAll().where('connection_id', '=', connectionId).where('subject', '=', subject).executeTakeFirst();
}

export async function insertFederatedIdentity(db: Kysely<Database>, row: FederatedIdentityRow): Promise<void> {
  await db.insertInto('federated_identities').values(row).execute();
}

export async function updateFederatedTokens(
  db: Kysely<Database>,
  userId: string,
  tokens: Pick<FederatedIdentityRow, 'access_token_sealed' | 'refresh_token_sealed' | 'id_token_sealed' | 'updated_at'>,
): Promise<void> {
  await db.updateTable('federated_identities').set(tokens).where('user_id', '=', userId).execute();
}

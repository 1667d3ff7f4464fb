/**
 * Pushed authorization requests (RFC 9126), stored by the SHA-256 of their request_uri. Taking one deletes it
 * in the same statement, so a request_uri is used once even when two browsers bring it at the same moment.
 */
import type { Kysely } from 'kysely';
import type { Database, PushedAuthorizationRequestsTable } from './schema.js';

export type PushedAuthorizationRequestRow = PushedAuthorizationRequestsTable;

const PURGE_EVERY = 200;
let insertsSincePurge = 0;

export async function insertPushedAuthorizationRequest(db: Kysely<Database>, row: PushedAuthorizationRequestRow): Promise<void> {
  if (++insertsSincePurge >= PURGE_EVERY) {
    insertsSincePurge = 0;
    await db.deleteFrom('pushed_authorization_requests').where('expires_at', '<', row.created_at).execute();
  }
  await db.insertInto('pushed_authorization_requests').values(row).execute();
}

/** Removes and returns the request; undefined when it is unknown or already taken. Expiry is the caller's check. */
export async function takePushedAuthorizationRequest(
  db: Kysely<Database>,
  tenantId: string,
  requestUriHash: string,
): Promise<PushedAuthorizationRequestRow | undefined> {
  return db
    .deleteFrom('pushed_authorization_requests')
    .where('tenant_id', '=', tenantId)
    .where('request_uri_hash', '=', requestUriHash)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Event streams at rest: the repository over `event_streams`, and what a stream's destination needs to POST
 * (its credential and signing secret unsealed). Every write locks the tenant's streams first, in its own
 * transaction, so that it is ordered with the changes whose events fan out to streams (outbox.ts).
 */
import type { Kysely } from 'kysely';
import { randomAlphanumeric } from '../crypto/ids.js';
import type { Sealer } from '../crypto/sealing.js';
import type { Database, EventStreamsTable, EventStreamStatus } from '../store/schema.js';
import { lockTenantStreams } from './outbox.js';

export type AuthorizationMethod = 'bearer' | 'basic' | 'custom_header';

/** What is stored in `destination` (never the secret part). */
export interface WebhookConfiguration {
  webhook_endpoint: string;
  webhook_authorization: { method: AuthorizationMethod; username?: string; header_key?: string };
}

export interface EventStream {
  id: string;
  tenantId: string;
  name: string;
  status: EventStreamStatus;
  subscriptions: string[];
  destinationType: 'webhook';
  configuration: WebhookConfiguration;
  credentialSealed: string | null;
  signingSecretSealed: string;
  consecutiveFailures: number;
  createdAt: number;
  updatedAt: number;
}

export const newStreamId = (): string => `est_${randomAlphanumeric(22)}`;

/** Stream and event ids: a prefix plus 22 alphanumerics. */
export const STREAM_ID = /^est_[A-Za-z0-9]{22}$/;
export const EVENT_ID = /^evt_[A-Za-z0-9]{22}$/;

/** Sealing contexts bind each secret to its stream and purpose. */
export const credentialContext = (streamId: string) => `event_stream_credential:${streamId}`;
export const signingSecretContext = (streamId: string) => `event_stream_signing_secret:${streamId}`;

function fromRow(row: EventStreamsTable): EventStream {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    status: row.status,
    subscriptions: JSON.parse(row.subscriptions) as string[],
    destinationType: 'webhook',
    configuration: JSON.parse(row.destination) as WebhookConfiguration,
    credentialSealed: row.credential_sealed,
    signingSecretSealed: row.signing_secret_sealed,
    consecutiveFailures: row.consecutive_failures,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toRow(stream: EventStream): EventStreamsTable {
  return {
    id: stream.id,
    tenant_id: stream.tenantId,
    name: stream.name,
    status: stream.status,
    subscriptions: JSON.stringify(stream.subscriptions),
    destination_type: stream.destinationType,
    destination: JSON.stringify(stream.configuration),
    credential_sealed: stream.credentialSealed,
    signing_secret_sealed: stream.signingSecretSealed,
    consecutive_failures: stream.consecutiveFailures,
    created_at: stream.createdAt,
    updated_at: stream.updatedAt,
  };
}

/** Runs a write of the tenant's streams in a transaction (the caller's, or one of its own) holding the lock. */
async function writeStreams<T>(db: Kysely<Database>, tenantId: string, write: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  const locked = async (trx: Kysely<Database>) => {
    await lockTenantStreams(trx, tenantId);
    return write(trx);
  };
  return db.isTransaction ? locked(db) : db.transaction().execute(locked);
}

export async function insertStream(db: Kysely<Database>, stream: EventStream): Promise<void> {
  await writeStreams(db, stream.tenantId, (trx) => trx.insertInto('event_streams').values(toRow(stream)).execute());
}

/**
 * Writes the columns `after` changes from `before` (its updatedAt from nextVersion), only while the stream is
 * still at `before`'s version (store/concurrent-change.ts); false, and nothing written, when it changed since.
 * Columns left alone keep what the delivery worker counted meanwhile (consecutive_failures).
 */
export async function updateStreamAsRead(db: Kysely<Database>, before: EventStream, after: EventStream): Promise<boolean> {
  const previous = toRow(before);
  const next = toRow(after);
  const changed = (Object.keys(next) as (keyof EventStreamsTable)[]).filter((column) => column !== 'id' && column !== 'tenant_id' && column !== 'created_at' && next[column] !== previous[column]);
  const result = await writeStreams(db, before.tenantId, (trx) =>
    trx
      .updateTable('event_streams')
      .set(Object.fromEntries(changed.map((column) => [column, next[column]])))
      .where('tenant_id', '=', before.tenantId)
      .where('id', '=', before.id)
      .where('updated_at', '=', before.updatedAt)
      .executeTakeFirst(),
  );
  return Number(result.numUpdatedRows) === 1;
}

export async function findStream(db: Kysely<Database>, tenantId: string, id: string): Promise<EventStream | undefined> {
  const row = await db.selectFrom('event_streams').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function findStreamById(db: Kysely<Database>, id: string): Promise<EventStream | undefined> {
  const row = await db.selectFrom('event_streams').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function findStreamByName(db: Kysely<Database>, tenantId: string, name: string): Promise<EventStream | undefined> {
  const row = await db.selectFrom('event_streams').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Oldest first, then by id, so checkpoint cursors stay stable. */
export async function listStreams(db: Kysely<Database>, tenantId: string): Promise<EventStream[]> {
  const rows = await db.selectFrom('event_streams').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
  return rows.map(fromRow);
}

export async function countStreams(db: Kysely<Database>, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('event_streams')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes the stream with its deliveries (cascade). */
export async function deleteStream(db: Kysely<Database>, tenantId: string, id: string): Promise<boolean> {
  const result = await writeStreams(db, tenantId, (trx) => trx.deleteFrom('event_streams').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst());
  return result.numDeletedRows > 0n;
}

/** The headers that authenticate a delivery to the stream's endpoint (empty when it has no credential). */
export function authorizationHeaders(stream: EventStream, sealer: Sealer): Record<string, string> {
  const auth = stream.configuration.webhook_authorization;
  if (stream.credentialSealed === null) return {};
  const secret = sealer.unseal(stream.credentialSealed, credentialContext(stream.id));
  switch (auth.method) {
    case 'bearer':
      return { authorization: `Bearer ${secret}` };
    case 'basic':
      return { authorization: `Basic ${Buffer.from(`${auth.username ?? ''}:${secret}`).toString('base64')}` };
    case 'custom_header':
      return auth.header_key ? { [auth.header_key.toLowerCase()]: secret } : {};
  }
}

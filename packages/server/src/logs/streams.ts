/**
 * Log streams at rest (migration 0026): the repository over `log_streams`, and the sealed parts a delivery
 * needs (the Authorization header, custom headers, the signing secret), each sealed to its stream and purpose.
 */
import { randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Sealer } from '../crypto/sealing.js';
import type { Database, LogStreamsTable, LogStreamStatus } from '../store/schema.js';
import type { LogCategory } from './categories.js';

export type HttpContentFormat = 'JSONLINES' | 'JSONARRAY' | 'JSONOBJECT';

/** What is stored of an http sink besides its secrets. */
export interface HttpSink {
  httpEndpoint: string;
  httpContentType: string;
  httpContentFormat: HttpContentFormat;
  /** Names of the custom headers (their values are sealed). */
  httpCustomHeaderNames: string[];
}

export interface CustomHeader {
  header: string;
  value: string;
}

export interface LogStream {
  id: string;
  tenantId: string;
  name: string;
  type: 'http';
  status: LogStreamStatus;
  isPriority: boolean;
  filters: LogCategory[];
  sink: HttpSink;
  authorizationSealed: string | null;
  customHeadersSealed: string | null;
  signingSecretSealed: string;
  cursor: string;
  batchEnd: string | null;
  attemptCount: number;
  consecutiveFailures: number;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

/** `lst_` and 16 digits, like the reference's ids. */
export function newLogStreamId(): string {
  return `lst_${String(randomInt(1e8)).padStart(8, '0')}${String(randomInt(1e8)).padStart(8, '0')}`;
}

export const authorizationContext = (id: string) => `log_stream_authorization:${id}`;
export const customHeadersContext = (id: string) => `log_stream_custom_headers:${id}`;
export const logStreamSigningContext = (id: string) => `log_stream_signing_secret:${id}`;

export function logStreamFromRow(row: LogStreamsTable): LogStream {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    type: 'http',
    status: row.status,
    isPriority: row.is_priority === 1,
    filters: JSON.parse(row.filters) as LogCategory[],
    sink: JSON.parse(row.sink) as HttpSink,
    authorizationSealed: row.authorization_sealed,
    customHeadersSealed: row.custom_headers_sealed,
    signingSecretSealed: row.signing_secret_sealed,
    cursor: row.cursor,
    batchEnd: row.batch_end,
    attemptCount: Number(row.attempt_count),
    consecutiveFailures: Number(row.consecutive_failures),
    lastError: row.last_error,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** The settings columns (what the Management API writes); delivery state is written by the worker only. */
function settingsOf(stream: LogStream) {
  return {
    name: stream.name,
    type: stream.type,
    status: stream.status,
    is_priority: stream.isPriority ? 1 : 0,
    filters: JSON.stringify(stream.filters),
    sink: JSON.stringify(stream.sink),
    authorization_sealed: stream.authorizationSealed,
    custom_headers_sealed: stream.customHeadersSealed,
    updated_at: stream.updatedAt,
  };
}

export async function insertLogStream(db: Kysely<Database>, stream: LogStream): Promise<void> {
  await db
    .insertInto('log_streams')
    .values({
      id: stream.id,
      tenant_id: stream.tenantId,
      ...settingsOf(stream),
      signing_secret_sealed: stream.signingSecretSealed,
      cursor: stream.cursor,
      batch_end: null,
      attempt_count: 0,
      next_attempt_at: stream.createdAt,
      lease_id: null,
      consecutive_failures: 0,
      last_error: null,
      created_at: stream.createdAt,
    })
    .execute();
}

/**
 * Writes a stream's settings (its updatedAt from nextVersion), only while the stream is still at the version
 * `readAt` (store/concurrent-change.ts); false, and nothing written, when it changed since. Resuming it (to
 * active) makes it due now and forgives its failures, so a suspended stream starts again where it stopped.
 */
export async function updateLogStreamAsRead(db: Kysely<Database>, stream: LogStream, resumed: boolean, readAt: number): Promise<boolean> {
  const result = await db
    .updateTable('log_streams')
    .set({ ...settingsOf(stream), ...(resumed && { next_attempt_at: Date.now(), consecutive_failures: 0, attempt_count: 0, last_error: null }) })
    .where('tenant_id', '=', stream.tenantId)
    .where('id', '=', stream.id)
    .where('updated_at', '=', readAt)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function findLogStream(db: Kysely<Database>, tenantId: string, id: string): Promise<LogStream | undefined> {
  const row = await db.selectFrom('log_streams').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return row ? logStreamFromRow(row) : undefined;
}

export async function findLogStreamByName(db: Kysely<Database>, tenantId: string, name: string): Promise<LogStream | undefined> {
  const row = await db.selectFrom('log_streams').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
  return row ? logStreamFromRow(row) : undefined;
}

export async function listLogStreams(db: Kysely<Database>, tenantId: string): Promise<LogStream[]> {
  const rows = await db.selectFrom('log_streams').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
  return rows.map(logStreamFromRow);
}

export async function deleteLogStream(db: Kysely<Database>, tenantId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('log_streams').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The secrets a delivery sends, unsealed; undefined when they do not open (another master key). */
export interface LogStreamSecrets {
  authorization: string | undefined;
  customHeaders: CustomHeader[];
  signingSecret: string;
}

export function unsealLogStreamSecrets(sealer: Sealer, stream: LogStream): LogStreamSecrets | undefined {
  try {
    return {
      authorization: stream.authorizationSealed === null ? undefined : sealer.unseal(stream.authorizationSealed, authorizationContext(stream.id)),
      customHeaders:
        stream.customHeadersSealed === null ? [] : (JSON.parse(sealer.unseal(stream.customHeadersSealed, customHeadersContext(stream.id))) as CustomHeader[]),
      signingSecret: sealer.unseal(stream.signingSecretSealed, logStreamSigningContext(stream.id)),
    };
  } catch {
    return undefined;
  }
}

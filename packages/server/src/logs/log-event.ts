/**
 * One tenant log event: what the flows say about an outcome (LogFacts), what the request adds (ip, user agent,
 * hostname), the row it is stored as, and the reference's wire shape it is read back as.
 *
 * Facts are named fields only, never a request body: no password, code, token or secret can reach a log event,
 * and `details` is built by the flows from values they choose (an error code, a method and path).
 */
import { randomInt } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { LogsTable } from '../store/schema.js';
import { LOG_EVENT_TYPES, strategyType, type LogEventType } from './catalogue.js';

export interface LogFacts {
  type: LogEventType;
  /** Defaults to the catalogue's description of the type; failures say what went wrong. */
  description?: string | undefined;
  client?: { client_id: string; name?: string | undefined } | undefined;
  connection?: { id: string; name: string; strategy: string } | undefined;
  user_id?: string | undefined;
  /** The identifier the person typed or the user's email/username; never a password. */
  user_name?: string | undefined;
  audience?: string | undefined;
  scope?: string | undefined;
  details?: Record<string, unknown> | undefined;
}

/** The reference's log event, as GET /api/v2/logs returns it. */
export interface LogEvent {
  log_id: string;
  date: string;
  type: string;
  description?: string;
  client_id?: string;
  client_name?: string;
  connection?: string;
  connection_id?: string;
  strategy?: string;
  strategy_type?: string;
  user_id?: string;
  user_name?: string;
  ip?: string;
  user_agent?: string;
  hostname?: string;
  audience?: string;
  scope?: string;
  isMobile: boolean;
  details?: Record<string, unknown>;
}

// --- ids --------------------------------------------------------------------------------------------------

/** Digits of the millisecond clock at the front of a log id: fixed width, so ids sort as their times do. */
const CLOCK_DIGITS = 15;
let lastMillis = 0;
let sequence = 0;

/**
 * Decimal digits, like the reference's log ids: 15 of the millisecond clock, 6 of a counter that keeps ids of
 * one process in the order they were made within a millisecond, and 9 random ones against other processes.
 */
export function newLogId(now = Date.now()): string {
  if (now === lastMillis) sequence = (sequence + 1) % 1_000_000;
  else {
    lastMillis = now;
    sequence = 0;
  }
  return `${String(now).padStart(CLOCK_DIGITS, '0')}${String(sequence).padStart(6, '0')}${String(randomInt(1_000_000_000)).padStart(9, '0')}`;
}

/** The smallest log id of an instant: `log_id < logIdAt(t)` is "before t" on the (tenant_id, log_id) index. */
export function logIdAt(millis: number): string {
  return String(Math.max(0, Math.floor(millis))).padStart(CLOCK_DIGITS, '0');
}

// --- from a request ---------------------------------------------------------------------------------------

const MOBILE = /Mobi|Android|iPhone|iPad|iPod/;

/** What the request itself tells: who called from where. */
export interface RequestOrigin {
  ip: string | null;
  user_agent: string | null;
  hostname: string | null;
}

export function requestOrigin(request: FastifyRequest): RequestOrigin {
  const userAgent = request.headers['user-agent'];
  return {
    ip: request.ip || null,
    user_agent: typeof userAgent === 'string' && userAgent ? userAgent.slice(0, 512) : null,
    hostname: request.hostname ? request.hostname.slice(0, 255) : null,
  };
}

function clip(value: string | undefined, max = 512): string | null {
  return value === undefined || value === '' ? null : value.slice(0, max);
}

/** The row of one event, dated now. */
export function logRow(tenantId: string, facts: LogFacts, origin: RequestOrigin, now = Date.now()): LogsTable {
  return {
    log_id: newLogId(now),
    tenant_id: tenantId,
    date: now,
    type: facts.type,
    description: clip(facts.description ?? LOG_EVENT_TYPES[facts.type], 1000),
    client_id: clip(facts.client?.client_id),
    client_name: clip(facts.client?.name),
    connection: clip(facts.connection?.name),
    connection_id: clip(facts.connection?.id),
    strategy: clip(facts.connection?.strategy),
    strategy_type: facts.connection ? strategyType(facts.connection.strategy) : null,
    user_id: clip(facts.user_id),
    user_name: clip(facts.user_name, 320),
    ip: origin.ip,
    user_agent: origin.user_agent,
    hostname: origin.hostname,
    audience: clip(facts.audience, 600),
    scope: clip(facts.scope, 2000),
    is_mobile: origin.user_agent && MOBILE.test(origin.user_agent) ? 1 : 0,
    details: facts.details ? JSON.stringify(facts.details) : null,
  };
}

const OPTIONAL_FIELDS = [
  'description', 'client_id', 'client_name', 'connection', 'connection_id', 'strategy', 'strategy_type',
  'user_id', 'user_name', 'ip', 'user_agent', 'hostname', 'audience', 'scope',
] as const;

/** The wire shape of a stored row: absent fields are left out rather than null, as the reference does. */
export function logEventOf(row: LogsTable): LogEvent {
  const event: LogEvent = { log_id: row.log_id, date: new Date(Number(row.date)).toISOString(), type: row.type, isMobile: row.is_mobile === 1 };
  for (const field of OPTIONAL_FIELDS) {
    const value = row[field];
    if (value !== null && value !== undefined) event[field] = value;
  }
  if (row.details) event.details = JSON.parse(row.details) as Record<string, unknown>;
  return event;
}

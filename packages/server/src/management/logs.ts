/**
 * /api/v2/logs and /api/v2/users/{id}/logs: the tenant's log events (logs/), as the reference serves them.
 *
 *  - Search: `q` (Lucene syntax, logs/query.ts; `search` is the newer SDKs' name for it), `page`/`per_page`
 *    (≤100, within the first 1000 results as in the reference), `include_totals` (`total` counts matches up to
 *    that same 1000), `sort` (`date:1` or `date:-1`, newest first by default), `fields`/`include_fields`.
 *  - Checkpoint: `from` (a log id) and/or `take` (≤100): the logs after `from` in log id order, as a plain array,
 *    with a `Link: <…?from=<last id>&take=N>; rel="next"` header; other parameters are ignored, as in the
 *    reference. Without `from`, reading starts at the oldest log kept.
 *
 * Where the reference is silent: a user's logs are served whether or not the user still exists (logs outlive
 * the users they mention), and searches name only indexed fields (a 400 lists them).
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { InvalidInput, NotFound } from '../http/errors.js';
import { asSent, errorResponses } from '../http/responses.js';
import { logEventOf, type LogEvent } from '../logs/log-event.js';
import { parseLogQuery, type LogFilter } from '../logs/query.js';
import type { App, Services } from '../services.js';
import { countLogs, findLog, logsAfter, searchLogs } from '../store/logs.js';
import { operation } from './operation.js';
import { selectFields } from './user-view.js';

const READ_SCOPES = ['read:logs', 'read:logs_users'];
const DEFAULT_PER_PAGE = 50;
/** Offset paging (and totals) stop here, as in the reference; checkpoint paging goes further. */
const SEARCH_WINDOW = 1000;

const LogEventSchema = Type.Object(
  {
    log_id: Type.String(),
    date: Type.String({ format: 'date-time' }),
    type: Type.String({ description: 'The event type code (s, f, fp, seccft, sapi, …)' }),
    description: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    client_name: Type.Optional(Type.String()),
    connection: Type.Optional(Type.String()),
    connection_id: Type.Optional(Type.String()),
    strategy: Type.Optional(Type.String()),
    strategy_type: Type.Optional(Type.String()),
    user_id: Type.Optional(Type.String()),
    user_name: Type.Optional(Type.String()),
    ip: Type.Optional(Type.String()),
    user_agent: Type.Optional(Type.String()),
    hostname: Type.Optional(Type.String()),
    audience: Type.Optional(Type.String()),
    scope: Type.Optional(Type.String()),
    isMobile: Type.Boolean(),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

const Sort = Type.String({ pattern: '^date:(1|-1)$', description: '`date:-1` (newest first, the default) or `date:1`' });
const Paging = {
  page: Type.Optional(Type.Integer({ minimum: 0 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  include_totals: Type.Optional(Type.Boolean()),
  sort: Type.Optional(Sort),
};

const LogsQuery = Type.Object(
  {
    ...Paging,
    q: Type.Optional(Type.String({ maxLength: 2000, description: 'Lucene query string over type, user_id, user_name, client_id, connection, ip, date, log_id' })),
    search: Type.Optional(Type.String({ maxLength: 2000, description: 'The same as q (the name newer SDKs send)' })),
    fields: Type.Optional(Type.String({ maxLength: 2000 })),
    include_fields: Type.Optional(Type.Boolean()),
    from: Type.Optional(Type.String({ maxLength: 64, pattern: '^[0-9]{1,64}$', description: 'Checkpoint: the log id to read after' })),
    take: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Checkpoint: how many logs to read' })),
  },
  { additionalProperties: false },
);
type LogsQuery = Static<typeof LogsQuery>;

const UserLogsQuery = Type.Object(Paging, { additionalProperties: false });
type Paging = Static<typeof UserLogsQuery>;

const UserIdParams = Type.Object({ id: Type.String({ minLength: 3, maxLength: 321, pattern: '^[A-Za-z0-9_.-]{1,64}\\|\\S{1,255}$' }) });
const LogIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const PartialLog = Type.Partial(LogEventSchema);
/** Sent as built: a plain array, or with include_totals the page and its totals. */
const LogList = Type.Unsafe<unknown>(
  asSent(
    Type.Union(
      [
        Type.Array(PartialLog),
        Type.Object({ start: Type.Integer(), limit: Type.Integer(), length: Type.Integer(), total: Type.Integer(), logs: Type.Array(PartialLog) }, { title: 'With totals' }),
      ],
      { description: 'The logs: an array (with from/take, the next checkpoint is in the Link header), or with include_totals the page and its totals' },
    ),
  ),
);

function searchWindow(query: Paging): { offset: number; limit: number } {
  const limit = query.per_page ?? DEFAULT_PER_PAGE;
  const offset = (query.page ?? 0) * limit;
  if (offset + limit > SEARCH_WINDOW) {
    throw new InvalidInput('querystring', `page: only the first ${SEARCH_WINDOW} results can be paged to; narrow q, or read by checkpoint (from, take)`);
  }
  return { offset, limit };
}

export function registerLogs(api: App, services: Services): void {
  const db = services.store.db;

  async function search(request: FastifyRequest, query: Paging, filter: LogFilter | undefined) {
    const tenantId = request.tenant.id;
    const { offset, limit } = searchWindow(query);
    const rows = await searchLogs(db, tenantId, { filter, descending: query.sort !== 'date:1', offset, limit });
    const logs = rows.map(logEventOf);
    if (!query.include_totals) return { logs };
    return { logs, total: await countLogs(db, tenantId, filter, SEARCH_WINDOW), offset, limit };
  }

  api.get('/logs', {
    ...operation(READ_SCOPES, {
      summary: 'Search log events, or read them from a checkpoint',
      querystring: LogsQuery,
      response: { 200: LogList, ...errorResponses('management', { 400: 'invalid_query_string: a bad q, sort, page beyond the first 1000 results, or from' }) },
    }),
    handler: async (request, reply) => {
      const query: LogsQuery = request.query;
      if (query.from !== undefined || query.take !== undefined) {
        const take = query.take ?? DEFAULT_PER_PAGE;
        const logs = (await logsAfter(db, request.tenant.id, query.from, take)).map(logEventOf);
        // With nothing new, `next` is the same request again (the reference's behaviour): poll it later.
        const next = logs.at(-1)?.log_id ?? query.from;
        const url = `${request.tenant.baseUrl}/api/v2/logs?${new URLSearchParams({ ...(next !== undefined && { from: next }), take: String(take) })}`;
        reply.header('link', `<${url}>; rel="next"`);
        return logs;
      }
      if (query.q !== undefined && query.search !== undefined && query.q !== query.search) throw new InvalidInput('querystring', 'q and search: send one of them');
      const result = await search(request, query, parseLogQuery(query.q ?? query.search));
      const logs: (LogEvent | Record<string, unknown>)[] = result.logs.map((log) => selectFields(log, query.fields, query.include_fields));
      if (!query.include_totals) return logs;
      return { start: result.offset, limit: result.limit, length: logs.length, total: result.total, logs };
    },
  });

  api.get('/logs/:id', {
    ...operation(READ_SCOPES, {
      summary: 'Get a log event',
      params: LogIdParams,
      response: { 200: LogEventSchema, ...errorResponses('management', { 404: 'inexistent_log: no log event with this id (or it is past retention)' }) },
    }),
    handler: async (request) => {
      const row = await findLog(db, request.tenant.id, request.params.id);
      if (!row) throw new NotFound('The log does not exist.', 'inexistent_log');
      return logEventOf(row);
    },
  });

  api.get('/users/:id/logs', {
    ...operation(READ_SCOPES, {
      summary: "Get a user's log events",
      params: UserIdParams,
      querystring: UserLogsQuery,
      response: { 200: LogList, ...errorResponses('management', { 400: 'invalid_query_string: a bad sort, or a page beyond the first 1000 results' }) },
    }),
    handler: async (request) => {
      const userId = request.params.id;
      const result = await search(request, request.query, (eb) => eb('user_id', '=', userId));
      if (!request.query.include_totals) return result.logs;
      return { start: result.offset, limit: result.limit, length: result.logs.length, total: result.total, logs: result.logs };
    },
  });
}

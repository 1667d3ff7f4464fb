/**
 * /api/v2/log-streams: the tenant's log events pushed to an HTTP receiver, in the reference's shapes (type
 * `http`, `sink.httpEndpoint`, `httpContentType`, `httpContentFormat` JSONLINES/JSONARRAY/JSONOBJECT,
 * `httpAuthorization`, `httpCustomHeaders`, `filters` by category, status active/paused/suspended). Delivery is
 * logs/stream-delivery.ts, run by the event delivery worker.
 *
 * Where the reference is silent or differs:
 *  - only `http` streams are offered; the reference's other types (eventbridge, eventgrid, datadog, splunk,
 *    sumo, segment, mixpanel) answer 501 not_offered, an unknown type 400; `pii_config` is 501 too;
 *  - `httpAuthorization` and the values of `httpCustomHeaders` are write-only, sealed at rest, kept on update
 *    when not sent again; reads show the custom headers' names only;
 *  - each stream gets a Standard Webhooks signing secret (`whsec_…`), shown once, as `signing_secret` in the
 *    create response; every request carries webhook-id, webhook-timestamp and webhook-signature;
 *  - the endpoint follows the event streams' rules (https to public addresses, or what the tenant setting
 *    allow_insecure_webhooks allows), checked here and again on every connection;
 *  - a new stream starts with the logs written from its creation on, or from `startFrom` (within retention);
 *    a paused or suspended stream keeps its place, and delivers what it missed when set active again;
 *  - `status: suspended` is set by delivery only (sustained failure); a PATCH may set active or paused;
 *  - `name` defaults to the id and is unique per tenant (409); a tenant has at most MAX_LOG_STREAMS (409).
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import { resolvedEndpointProblem } from '../events/destination.js';
import { newSigningSecret } from '../events/signing.js';
import { Conflict, InvalidInput, NotFound, NotOffered } from '../http/errors.js';
import { errorResponses, noContent } from '../http/responses.js';
import { LOG_CATEGORY_NAMES, type LogCategory } from '../logs/categories.js';
import { logIdAt } from '../logs/log-event.js';
import {
  authorizationContext,
  customHeadersContext,
  deleteLogStream,
  findLogStream,
  findLogStreamByName,
  insertLogStream,
  listLogStreams,
  logStreamSigningContext,
  newLogStreamId,
  updateLogStreamAsRead,
  type CustomHeader,
  type HttpContentFormat,
  type HttpSink,
  type LogStream,
} from '../logs/streams.js';
import type { App, Services } from '../services.js';
import { ConcurrentChange, concurrentChangeConflict, nextVersion, retryOnConcurrentChange } from '../store/concurrent-change.js';
import type { Tenant } from '../store/tenants.js';
import { operation } from './operation.js';

export const MAX_LOG_STREAMS = 10;
const MAX_CUSTOM_HEADERS = 20;

/** The reference's other sink types: real there, not offered here. */
const OTHER_TYPES = ['eventbridge', 'eventgrid', 'datadog', 'splunk', 'sumo', 'segment', 'mixpanel'];

const NO_NUL = '^[^\\u0000]*$';
const HEADER_VALUE = '^[^\\u0000\\r\\n]*$';
const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
/** Headers the delivery sets itself. */
const RESERVED_HEADERS = new Set(['host', 'authorization', 'content-type', 'content-length', 'transfer-encoding', 'connection', 'webhook-id', 'webhook-timestamp', 'webhook-signature']);

const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: NO_NUL }) });
const Name = Type.String({ minLength: 1, maxLength: 128, pattern: NO_NUL });
const ContentFormat = Type.Unsafe<HttpContentFormat>({ type: 'string', enum: ['JSONLINES', 'JSONARRAY', 'JSONOBJECT'] });
const Filter = Type.Object(
  { type: Type.Literal('category'), name: Type.Unsafe<LogCategory>({ type: 'string', enum: LOG_CATEGORY_NAMES }) },
  { additionalProperties: false },
);
const Filters = Type.Array(Filter, { maxItems: LOG_CATEGORY_NAMES.length });
const CustomHeaders = Type.Array(
  Type.Object(
    { header: Type.String({ minLength: 1, maxLength: 128, pattern: HEADER_NAME }), value: Type.String({ maxLength: 4096, pattern: HEADER_VALUE }) },
    { additionalProperties: false },
  ),
  { maxItems: MAX_CUSTOM_HEADERS },
);

/** The http sink's fields; other types' fields pass the schema so that their type can be answered 501. */
const SinkInput = Type.Object(
  {
    httpEndpoint: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: NO_NUL })),
    httpContentType: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e][\\x20-\\x7e]*$' })),
    httpContentFormat: Type.Optional(ContentFormat),
    httpAuthorization: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, pattern: HEADER_VALUE })),
    httpCustomHeaders: Type.Optional(CustomHeaders),
  },
  { additionalProperties: true },
);
type SinkInput = Static<typeof SinkInput>;
const HTTP_SINK_FIELDS = new Set(['httpEndpoint', 'httpContentType', 'httpContentFormat', 'httpAuthorization', 'httpCustomHeaders']);

const CreateBody = Type.Object(
  {
    name: Type.Optional(Name),
    type: Type.String({ minLength: 1, maxLength: 32 }),
    isPriority: Type.Optional(Type.Boolean()),
    filters: Type.Optional(Filters),
    pii_config: Type.Optional(Type.Unknown()),
    sink: SinkInput,
    startFrom: Type.Optional(Type.String({ format: 'date-time', maxLength: 64 })),
  },
  { additionalProperties: false },
);
const UpdateBody = Type.Object(
  {
    name: Type.Optional(Name),
    status: Type.Optional(Type.Unsafe<'active' | 'paused'>({ type: 'string', enum: ['active', 'paused'] })),
    isPriority: Type.Optional(Type.Boolean()),
    filters: Type.Optional(Filters),
    pii_config: Type.Optional(Type.Unknown()),
    sink: Type.Optional(SinkInput),
  },
  { additionalProperties: false },
);

const LogStreamView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.Literal('http'),
  status: Type.Unsafe<'active' | 'paused' | 'suspended'>({ type: 'string', enum: ['active', 'paused', 'suspended'] }),
  isPriority: Type.Boolean(),
  filters: Type.Array(Type.Object({ type: Type.String(), name: Type.String() })),
  sink: Type.Object({
    httpEndpoint: Type.String(),
    httpContentType: Type.String(),
    httpContentFormat: Type.String(),
    httpCustomHeaders: Type.Optional(Type.Array(Type.Object({ header: Type.String() }), { description: 'Names only: the values are write-only' })),
  }),
});
type LogStreamView = Static<typeof LogStreamView>;
const CreatedLogStreamView = Type.Object({
  ...LogStreamView.properties,
  signing_secret: Type.String({ description: 'The Standard Webhooks signing secret of the deliveries; shown only in this response' }),
});

function present(stream: LogStream): LogStreamView {
  return {
    id: stream.id,
    name: stream.name,
    type: 'http',
    status: stream.status,
    isPriority: stream.isPriority,
    filters: stream.filters.map((name) => ({ type: 'category', name })),
    sink: {
      httpEndpoint: stream.sink.httpEndpoint,
      httpContentType: stream.sink.httpContentType,
      httpContentFormat: stream.sink.httpContentFormat,
      ...(stream.sink.httpCustomHeaderNames.length > 0 && { httpCustomHeaders: stream.sink.httpCustomHeaderNames.map((header) => ({ header })) }),
    },
  };
}

class LogStreamNotFound extends NotFound {
  constructor() {
    super('The log stream does not exist.', 'inexistent_log_stream');
  }
}

class LogStreamNameTaken extends Conflict {
  constructor() {
    super('A log stream with the same name already exists');
  }
}

function refusePii(piiConfig: unknown): void {
  if (piiConfig !== undefined) throw new NotOffered('PII hashing in log streams (pii_config)', 'is not offered by this server; leave pii_config out.');
}

function checkType(type: string): void {
  if (type === 'http') return;
  if (OTHER_TYPES.includes(type)) throw new NotOffered(`Log streams of type ${type}`, 'are not offered by this server; use an http stream (a custom webhook).');
  throw new InvalidInput('body', `type: expected http (or one of the reference's ${OTHER_TYPES.join(', ')}, which are not offered)`);
}

interface ResolvedSink {
  sink: HttpSink;
  authorizationSealed: string | null;
  customHeadersSealed: string | null;
}

/** Checks an http sink (merged over the stream's, on update) and seals its secrets. */
async function resolveSink(services: Services, tenant: Tenant, id: string, input: SinkInput, existing?: LogStream): Promise<ResolvedSink> {
  const extra = Object.keys(input).filter((key) => !HTTP_SINK_FIELDS.has(key));
  if (extra.length > 0) throw new InvalidInput('body', `sink: ${extra.join(', ')} not allowed in an http stream's sink`);
  const endpoint = input.httpEndpoint ?? existing?.sink.httpEndpoint;
  if (endpoint === undefined) throw new InvalidInput('body', 'sink.httpEndpoint is required');
  if (input.httpEndpoint !== undefined) {
    const problem = await resolvedEndpointProblem(endpoint, tenant.settings.allow_insecure_webhooks === true);
    if (problem) throw new InvalidInput('body', `sink.${problem.replace(/^webhook_endpoint/, 'httpEndpoint').replace('use webhook_authorization', 'use httpAuthorization')}`);
  }
  const headers: CustomHeader[] | undefined = input.httpCustomHeaders;
  if (headers) {
    const names = headers.map((h) => h.header.toLowerCase());
    const reserved = names.find((name) => RESERVED_HEADERS.has(name));
    if (reserved) throw new InvalidInput('body', `sink.httpCustomHeaders: ${reserved} is set by the delivery itself`);
    if (new Set(names).size !== names.length) throw new InvalidInput('body', 'sink.httpCustomHeaders: a header is named twice');
  }
  return {
    sink: {
      httpEndpoint: endpoint,
      httpContentType: input.httpContentType ?? existing?.sink.httpContentType ?? 'application/json',
      httpContentFormat: input.httpContentFormat ?? existing?.sink.httpContentFormat ?? 'JSONLINES',
      httpCustomHeaderNames: headers ? headers.map((h) => h.header) : (existing?.sink.httpCustomHeaderNames ?? []),
    },
    authorizationSealed:
      input.httpAuthorization !== undefined ? services.sealer.seal(input.httpAuthorization, authorizationContext(id)) : (existing?.authorizationSealed ?? null),
    customHeadersSealed: headers
      ? headers.length > 0
        ? services.sealer.seal(JSON.stringify(headers), customHeadersContext(id))
        : null
      : (existing?.customHeadersSealed ?? null),
  };
}

const uniqueFilters = (filters: readonly { name: LogCategory }[]): LogCategory[] => [...new Set(filters.map((f) => f.name))];

export function registerLogStreams(api: App, services: Services): void {
  const db = services.store.db;

  async function requireStream(tenantId: string, id: string): Promise<LogStream> {
    const stream = await findLogStream(db, tenantId, id);
    if (!stream) throw new LogStreamNotFound();
    return stream;
  }

  api.get('/log-streams', {
    ...operation(['read:log_streams'], { summary: 'List log streams', response: { 200: Type.Array(LogStreamView) } }),
    handler: async (request) => (await listLogStreams(db, request.tenant.id)).map(present),
  });

  api.post('/log-streams', {
    ...operation(['create:log_streams'], {
      summary: 'Create a log stream (type http)',
      body: CreateBody,
      response: {
        200: CreatedLogStreamView,
        ...errorResponses('management', {
          409: 'conflict: a log stream with this name exists, or the tenant has the most log streams it may',
          501: 'not_offered: a sink type other than http, or pii_config',
        }),
      },
    }),
    handler: async (request) => {
      const tenant = request.tenant;
      const body = request.body;
      checkType(body.type);
      refusePii(body.pii_config);
      const now = Date.now();
      let cursor = logIdAt(now);
      if (body.startFrom !== undefined) {
        const from = Date.parse(body.startFrom);
        if (from > now) throw new InvalidInput('body', 'startFrom: must not be in the future');
        cursor = logIdAt(from - 1);
      }
      const id = newLogStreamId();
      const name = body.name ?? id;
      if (await findLogStreamByName(db, tenant.id, name)) throw new LogStreamNameTaken();
      if ((await listLogStreams(db, tenant.id)).length >= MAX_LOG_STREAMS) throw new Conflict(`A tenant may have at most ${MAX_LOG_STREAMS} log streams`);
      const resolved = await resolveSink(services, tenant, id, body.sink);
      const signingSecret = newSigningSecret();
      const stream: LogStream = {
        id,
        tenantId: tenant.id,
        name,
        type: 'http',
        status: 'active',
        isPriority: body.isPriority ?? false,
        filters: uniqueFilters(body.filters ?? []),
        ...resolved,
        signingSecretSealed: services.sealer.seal(signingSecret, logStreamSigningContext(id)),
        cursor,
        batchEnd: null,
        attemptCount: 0,
        consecutiveFailures: 0,
        lastError: null,
        createdAt: now,
        updatedAt: now,
      };
      try {
        await insertLogStream(db, stream);
      } catch (err) {
        if (await findLogStreamByName(db, tenant.id, name)) throw new LogStreamNameTaken();
        throw err;
      }
      return { ...present(stream), signing_secret: signingSecret };
    },
  });

  api.get('/log-streams/:id', {
    ...operation(['read:log_streams'], {
      summary: 'Get a log stream',
      params: Params,
      response: { 200: LogStreamView, ...errorResponses('management', { 404: 'inexistent_log_stream' }) },
    }),
    handler: async (request) => present(await requireStream(request.tenant.id, request.params.id)),
  });

  api.patch('/log-streams/:id', {
    ...operation(['update:log_streams'], {
      summary: 'Update a log stream (name, status active/paused, filters, sink)',
      params: Params,
      body: UpdateBody,
      response: {
        200: LogStreamView,
        ...errorResponses('management', {
          404: 'inexistent_log_stream',
          409: concurrentChangeConflict('conflict: a log stream with this name exists'),
          501: 'not_offered: pii_config',
        }),
      },
    }),
    handler: async (request) => {
      const tenant = request.tenant;
      const body = request.body;
      refusePii(body.pii_config);
      // Read, change, conditional write; again when another request (or the worker suspending it) changed the
      // stream meanwhile, so that two PATCHes of different fields both land (store/concurrent-change.ts).
      const updated = await retryOnConcurrentChange('log stream', async () => {
        const stream = await requireStream(tenant.id, request.params.id);
        const name = body.name ?? stream.name;
        const nameTaken = async () => {
          const holder = await findLogStreamByName(db, tenant.id, name);
          return holder !== undefined && holder.id !== stream.id;
        };
        if (name !== stream.name && (await nameTaken())) throw new LogStreamNameTaken();
        const resolved = body.sink ? await resolveSink(services, tenant, stream.id, body.sink, stream) : undefined;
        const status = body.status ?? stream.status;
        const updated: LogStream = {
          ...stream,
          name,
          status,
          isPriority: body.isPriority ?? stream.isPriority,
          filters: body.filters ? uniqueFilters(body.filters) : stream.filters,
          ...resolved,
          updatedAt: nextVersion(stream.updatedAt, Date.now()),
        };
        let written: boolean;
        try {
          written = await updateLogStreamAsRead(db, updated, status === 'active' && stream.status !== 'active', stream.updatedAt);
        } catch (err) {
          if (await nameTaken()) throw new LogStreamNameTaken();
          throw err;
        }
        if (!written) throw new ConcurrentChange();
        return updated;
      });
      return present(updated);
    },
  });

  api.delete('/log-streams/:id', {
    ...operation(['delete:log_streams'], {
      summary: 'Delete a log stream',
      params: Params,
      response: { 204: noContent('Deleted'), ...errorResponses('management', { 404: 'inexistent_log_stream' }) },
    }),
    handler: async (request, reply) => {
      if (!(await deleteLogStream(db, request.tenant.id, request.params.id))) throw new LogStreamNotFound();
      return reply.code(204).send();
    },
  });
}

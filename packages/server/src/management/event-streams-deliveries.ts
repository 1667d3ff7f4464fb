/**
 * /api/v2/event-streams/{id}/deliveries, /redeliver and /stats (reference A.1, A.4, A.6).
 *
 * A delivery record is an event that a stream failed to deliver after all its attempts: only those are
 * stored as records and listed, as the reference says. Its `id` is the event id. `event.data` is the
 * CloudEvent's data as a JSON string (the contract's Cloud event object). Where the reference is silent:
 *  - the list is oldest first; without `from`/`take` it is a plain array of at most 50, with either it is
 *    `{ deliveries, next? }` (what the SDKs read);
 *  - `date_from`/`date_to` are `YYYY-MM-DDTHH:MM:SSZ` (or a date) and filter on when the event was raised;
 *  - redelivering one event that is not a failed delivery (pending or delivered) is 409;
 *  - stats count deliveries finished in the window (default: the last 24 hours) per bucket, as the metrics
 *    `successful_deliveries` and `failed_deliveries`.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import { isEventType } from '../events/catalogue.js';
import { countOutcomes, findDelivery, listFailed, redeliver, type FailedDeliveryRow, type StoredAttempt } from '../events/deliveries.js';
import { eventSource, signalDeliveriesQueued, type CloudEventData } from '../events/outbox.js';
import { Conflict, InvalidInput, NotFound } from '../http/errors.js';
import { asSent, errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import type { Tenant } from '../store/tenants.js';
import { EventTypeSchema, requireStream, StreamEventParams, StreamParams } from './event-streams.js';
import { operation } from './operation.js';

const AttemptView = Type.Object(
  { status: Type.Literal('failed'), timestamp: Type.String({ format: 'date-time' }), error_message: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const CloudEventView = Type.Object(
  {
    id: Type.String(),
    source: Type.String(),
    specversion: Type.String(),
    type: Type.String(),
    time: Type.String({ format: 'date-time' }),
    data: Type.String({ description: 'The event data, JSON-encoded' }),
  },
  { additionalProperties: false },
);
export const DeliveryView = Type.Object(
  {
    id: Type.String(),
    event_stream_id: Type.String({ minLength: 26, maxLength: 26 }),
    status: Type.Literal('failed'),
    event_type: Type.String({ maxLength: 33 }),
    attempts: Type.Array(AttemptView),
    event: Type.Optional(CloudEventView),
  },
  { additionalProperties: false },
);
export type DeliveryView = Static<typeof DeliveryView>;
export type AttemptView = Static<typeof AttemptView>;
export type CloudEventView = Static<typeof CloudEventView>;

export function presentAttempt(attempt: StoredAttempt): AttemptView {
  return {
    status: 'failed',
    timestamp: new Date(attempt.timestamp).toISOString(),
    ...(attempt.error_message !== undefined && { error_message: attempt.error_message }),
  };
}

export function presentEvent(event: { id: string; type: string; created_at: number; data: CloudEventData | string }, tenant: Tenant): CloudEventView {
  return {
    id: event.id,
    source: eventSource(tenant.baseUrl),
    specversion: '1.0',
    type: event.type,
    time: new Date(event.created_at).toISOString(),
    data: typeof event.data === 'string' ? event.data : JSON.stringify(event.data),
  };
}

function presentDelivery(row: FailedDeliveryRow, tenant: Tenant): DeliveryView {
  return {
    id: row.event_id,
    event_stream_id: row.stream_id,
    status: 'failed',
    event_type: row.event_type,
    attempts: (JSON.parse(row.attempts) as StoredAttempt[]).map(presentAttempt),
    event: presentEvent({ id: row.event_id, type: row.event_type, created_at: row.created_at, data: row.data }, tenant),
  };
}

const DateParam = Type.String({ maxLength: 20, pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}:\\d{2}Z)?$' });

function parseDate(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const at = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(at)) throw new InvalidInput('querystring', `${name}: not a valid date`);
  return at;
}

function parseStatuses(value: string | readonly string[] | undefined, part: 'querystring' | 'body'): void {
  if (value === undefined) return;
  const list = typeof value === 'string' ? value.split(',') : value;
  for (const status of list) if (status.trim() !== 'failed') throw new InvalidInput(part, `statuses: only "failed" deliveries are recorded`);
}

function parseEventTypes(value: string | readonly string[] | undefined, part: 'querystring' | 'body'): string[] | undefined {
  if (value === undefined) return undefined;
  const list = (typeof value === 'string' ? value.split(',') : value).map((t) => t.trim()).filter(Boolean);
  for (const type of list) if (!isEventType(type)) throw new InvalidInput(part, `event_types: ${JSON.stringify(type.slice(0, 40))} is not an event type`);
  return list;
}

function encodeCursor(row: FailedDeliveryRow): string {
  return Buffer.from(`d:${row.created_at}:${row.event_id}`).toString('base64url');
}

function decodeCursor(from: string): { createdAt: number; eventId: string } {
  const match = /^d:(\d{1,15}):(evt_[A-Za-z0-9]{22})$/.exec(Buffer.from(from, 'base64url').toString('utf8'));
  if (!match) throw new InvalidInput('querystring', 'from: not a cursor returned by this API');
  return { createdAt: Number(match[1]), eventId: match[2]! };
}

const DeliveriesQuery = Type.Object(
  {
    statuses: Type.Optional(Type.String({ maxLength: 100 })),
    event_types: Type.Optional(Type.String({ maxLength: 1000 })),
    date_from: Type.Optional(DateParam),
    date_to: Type.Optional(DateParam),
    from: Type.Optional(Type.String({ maxLength: 200 })),
    take: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: false },
);

const RedeliverBody = Type.Object(
  {
    date_from: Type.Optional(DateParam),
    date_to: Type.Optional(DateParam),
    statuses: Type.Optional(Type.Array(Type.Literal('failed'), { maxItems: 1 })),
    event_types: Type.Optional(Type.Array(EventTypeSchema, { maxItems: 22 })),
  },
  { additionalProperties: false },
);

const StatsQuery = Type.Object({ date_from: Type.Optional(DateParam), date_to: Type.Optional(DateParam) }, { additionalProperties: false });

const StatsView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  window: Type.Object({
    date_from: Type.String({ format: 'date-time' }),
    date_to: Type.String({ format: 'date-time' }),
    bucket_interval: Type.Object({ scale_factor: Type.Integer({ description: 'Bucket width in seconds' }) }),
  }),
  buckets: Type.Array(Type.String({ format: 'date-time' })),
  metrics: Type.Array(
    Type.Object({ name: Type.String(), window_total: Type.Integer(), type: Type.String(), data: Type.Array(Type.Integer()) }),
  ),
});

const DAY_MS = 86_400_000;
const MAX_STATS_WINDOW_MS = 31 * DAY_MS;
/** Bucket widths in seconds; the smallest that keeps the window within MAX_BUCKETS is used. */
const BUCKET_SCALES = [60, 300, 900, 3600, 21_600, 86_400];
const MAX_BUCKETS = 100;

function dateFilter(date_from: string | undefined, date_to: string | undefined, part: 'querystring' | 'body') {
  const from = parseDate(date_from, 'date_from');
  const to = parseDate(date_to, 'date_to');
  if (from !== undefined && to !== undefined && from >= to) throw new InvalidInput(part, 'date_from must be before date_to');
  return { ...(from !== undefined && { from }), ...(to !== undefined && { to }) };
}

export function registerEventStreamDeliveries(api: App, services: Services): void {
  const db = services.store.db;

  api.get('/event-streams/:id/deliveries', {
    ...operation(['read:event_streams', 'read:event_deliveries'], {
      summary: 'List the failed deliveries of an event stream',
      params: StreamParams,
      querystring: DeliveriesQuery,
      response: {
        200: Type.Unsafe<unknown>(
          asSent(
            Type.Union([Type.Array(DeliveryView), Type.Object({ deliveries: Type.Array(DeliveryView), next: Type.Optional(Type.String()) })], {
              description: 'An array, or with from/take a checkpoint page',
            }),
          ),
        ),
        ...errorResponses('management', { 404: 'inexistent_event_stream' }),
      },
    }),
    handler: async (request) => {
      const stream = await requireStream(services, request.tenant.id, request.params.id);
      const query = request.query;
      parseStatuses(query.statuses, 'querystring');
      const eventTypes = parseEventTypes(query.event_types, 'querystring');
      const filter = { ...dateFilter(query.date_from, query.date_to, 'querystring'), ...(eventTypes && { eventTypes }) };
      const checkpoint = query.from !== undefined || query.take !== undefined;
      const limit = query.take ?? 50;
      const rows = await listFailed(db, stream.id, filter, {
        ...(query.from && { after: decodeCursor(query.from) }),
        limit: limit + 1,
      });
      const page = rows.slice(0, limit);
      const deliveries = page.map((row) => presentDelivery(row, request.tenant));
      if (!checkpoint) return deliveries;
      const last = page[page.length - 1];
      return { deliveries, ...(rows.length > limit && last && { next: encodeCursor(last) }) };
    },
  });

  api.get('/event-streams/:id/deliveries/:event_id', {
    ...operation(['read:event_deliveries'], {
      summary: "Get an event's failed delivery to an event stream",
      params: StreamEventParams,
      response: { 200: DeliveryView, ...errorResponses('management', { 404: 'inexistent_event_stream or inexistent_delivery' }) },
    }),
    handler: async (request) => {
      const stream = await requireStream(services, request.tenant.id, request.params.id);
      const row = await findDelivery(db, stream.id, request.params.event_id);
      if (!row || row.status !== 'failed') throw new NotFound('No failed delivery of this event to the event stream.', 'inexistent_delivery');
      return presentDelivery(row, request.tenant);
    },
  });

  api.post('/event-streams/:id/redeliver', {
    ...operation(['update:event_deliveries'], {
      summary: 'Redeliver the failed deliveries that match a filter (all of them for an empty body)',
      params: StreamParams,
      body: RedeliverBody,
      response: { 202: RedeliverBody, ...errorResponses('management', { 404: 'inexistent_event_stream' }) },
    }),
    // No body at all means no filter: every failed delivery.
    preValidation: async (request) => {
      request.body ??= {};
    },
    handler: async (request, reply) => {
      const stream = await requireStream(services, request.tenant.id, request.params.id);
      const body = request.body;
      parseStatuses(body.statuses, 'body');
      const filter = { ...dateFilter(body.date_from, body.date_to, 'body'), ...(body.event_types && { eventTypes: body.event_types }) };
      if ((await redeliver(db, stream.id, filter)) > 0) signalDeliveriesQueued();
      return reply.code(202).send(body);
    },
  });

  api.post('/event-streams/:id/redeliver/:event_id', {
    ...operation(['update:event_deliveries'], {
      summary: "Redeliver one event's failed delivery",
      params: StreamEventParams,
      response: {
        202: noContent('Queued for delivery'),
        ...errorResponses('management', {
          404: 'inexistent_event_stream or inexistent_delivery',
          409: 'not_redeliverable: only failed deliveries can be redelivered',
        }),
      },
    }),
    handler: async (request, reply) => {
      const stream = await requireStream(services, request.tenant.id, request.params.id);
      const row = await findDelivery(db, stream.id, request.params.event_id);
      if (!row) throw new NotFound('No delivery of this event to the event stream.', 'inexistent_delivery');
      if ((await redeliver(db, stream.id, { eventId: row.event_id })) === 0) {
        throw new Conflict('The event is not in a state that can be redelivered (only failed deliveries can be)', 'not_redeliverable');
      }
      signalDeliveriesQueued();
      return reply.code(202).send();
    },
  });

  api.get('/event-streams/:id/stats', {
    ...operation(['read:event_streams'], {
      summary: 'Delivered and failed counts of an event stream, per time bucket',
      params: StreamParams,
      querystring: StatsQuery,
      response: { 200: StatsView, ...errorResponses('management', { 404: 'inexistent_event_stream' }) },
    }),
    handler: async (request) => {
      const stream = await requireStream(services, request.tenant.id, request.params.id);
      const dates = dateFilter(request.query.date_from, request.query.date_to, 'querystring');
      const to = dates.to ?? Date.now();
      const from = dates.from ?? to - DAY_MS;
      if (from >= to) throw new InvalidInput('querystring', 'date_from must be before date_to');
      if (to - from > MAX_STATS_WINDOW_MS) throw new InvalidInput('querystring', 'The stats window may span 31 days at most');
      const scale = BUCKET_SCALES.find((s) => (to - from) / (s * 1000) <= MAX_BUCKETS) ?? 86_400;
      const bucketMs = scale * 1000;
      const count = Math.ceil((to - from) / bucketMs);
      const delivered = new Array<number>(count).fill(0);
      const failed = new Array<number>(count).fill(0);
      for (const row of await countOutcomes(db, stream.id, from, to, bucketMs)) {
        const target = row.status === 'delivered' ? delivered : failed;
        if (row.bucket >= 0 && row.bucket < count) target[row.bucket] = (target[row.bucket] ?? 0) + row.n;
      }
      const sum = (data: number[]) => data.reduce((a, b) => a + b, 0);
      return {
        id: stream.id,
        name: stream.name,
        window: { date_from: new Date(from).toISOString(), date_to: new Date(to).toISOString(), bucket_interval: { scale_factor: scale } },
        buckets: Array.from({ length: count }, (_, i) => new Date(from + i * bucketMs).toISOString()),
        metrics: [
          { name: 'successful_deliveries', window_total: sum(delivered), type: 'sum', data: delivered },
          { name: 'failed_deliveries', window_total: sum(failed), type: 'sum', data: failed },
        ],
      };
    },
  });
}

/**
 * POST /api/v2/event-streams/{id}/test (the contract's post_test_event): sends one CloudEvent of the asked
 * type, marked `a0purpose: "test"`, to the stream's webhook, once, synchronously, and answers 202 with the
 * delivery record. Nothing is stored: a test is not an event of the tenant.
 */
import { Type } from '@fastify/type-provider-typebox';
import { sampleObject } from '../events/catalogue.js';
import { deliverOnce, unsealStreamSecrets } from '../events/delivery.js';
import { contextData, eventSource, newEventId, type CloudEvent, type CloudEventData } from '../events/outbox.js';
import { InvalidInput } from '../http/errors.js';
import { errorResponses } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { DeliveryView, presentAttempt, presentEvent } from './event-streams-deliveries.js';
import { EventTypeSchema, requireStream, StreamParams } from './event-streams.js';
import { operation } from './operation.js';

/** The one attempt is bounded well below the SDKs' request timeout. */
export const TEST_EVENT_TIMEOUT_MS = 5000;

const TestBody = Type.Object(
  {
    event_type: EventTypeSchema,
    data: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The CloudEvent `data` to send; a sample of the type when absent' })),
  },
  { additionalProperties: false },
);

export const TEST_EVENT_DESCRIPTION = [
  'Sends one test event (a CloudEvent with `a0purpose: "test"`) to the stream, attempting it once, synchronously,',
  `for at most ${TEST_EVENT_TIMEOUT_MS / 1000} seconds, and answers 202 with the delivery record.`,
  'How to read the record: its `status` is always `failed` (the only value the contract allows), whatever happened.',
  'The delivery SUCCEEDED when the attempt has no `error_message` and the record has no `event`.',
  'It FAILED when the attempt carries an `error_message` (why) and the record carries the `event` that was sent.',
  'A disabled stream is not sent anything: the attempt says so in its `error_message`.',
  'The body may be JSON or form encoded; in a form, `data` is a JSON object as text.',
].join(' ');

export function registerEventStreamTest(api: App, services: Services): void {
  const op = operation(['update:event_streams'], {
    summary: 'Send a test event to an event stream',
    params: StreamParams,
    body: TestBody,
    response: { 202: DeliveryView, ...errorResponses('management', { 404: 'inexistent_event_stream' }) },
  });
  api.post('/event-streams/:id/test', {
    ...op,
    schema: { ...op.schema, description: `${TEST_EVENT_DESCRIPTION}\n\n${(op.schema as { description?: string }).description ?? ''}` },
    // A form body carries `data` as text: read it as the JSON object it stands for before validation.
    preValidation: async (request) => {
      const body = request.body as Record<string, unknown> | undefined;
      if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') || typeof body?.data !== 'string') return;
      try {
        body.data = JSON.parse(body.data) as unknown;
      } catch {
        throw new InvalidInput('body', 'data: must be a JSON object');
      }
    },
    handler: async (request, reply) => {
      const tenant = request.tenant;
      const stream = await requireStream(services, tenant.id, request.params.id);
      const { event_type, data } = request.body;
      const now = Date.now();
      const eventData: CloudEventData =
        (data as CloudEventData | undefined) ?? { object: sampleObject(event_type), context: contextData(tenant.id, { tenant_id: tenant.id }) };
      const event: CloudEvent = {
        specversion: '1.0',
        type: event_type,
        source: eventSource(tenant.baseUrl),
        id: newEventId(now),
        time: new Date(now).toISOString(),
        data: eventData,
        a0tenant: tenant.name,
        a0stream: stream.id,
        a0purpose: 'test',
      };
      const outcome =
        stream.status === 'enabled'
          ? await deliverOnce(unsealStreamSecrets(services.sealer, stream), stream, event, {
              allowInsecure: tenant.settings.allow_insecure_webhooks === true,
              timeoutMs: TEST_EVENT_TIMEOUT_MS,
            })
          : { ok: false, errorMessage: 'The event stream is disabled; the test event was not sent', durationMs: 0, statusCode: undefined };
      request.log.info(
        { stream: stream.id, event: event.id, purpose: 'test', status_code: outcome.statusCode, duration_ms: outcome.durationMs, outcome: outcome.ok ? 'delivered' : outcome.errorMessage },
        'event delivery attempt',
      );
      const record: DeliveryView = {
        id: event.id,
        event_stream_id: stream.id,
        status: 'failed',
        event_type,
        attempts: [presentAttempt({ timestamp: now, ...(!outcome.ok && { error_message: outcome.errorMessage ?? 'Delivery failed' }) })],
        ...(!outcome.ok && { event: presentEvent({ id: event.id, type: event_type, created_at: now, data: eventData }, tenant) }),
      };
      return reply.code(202).send(record);
    },
  });
}

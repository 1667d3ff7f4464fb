/**
 * /api/v2/event-streams (reference A.1 to A.3): list, create (201), get, update, delete (204) of webhook
 * event streams. Deliveries, redelivery and stats are in event-streams-deliveries.ts; the test event in
 * event-streams-test.ts.
 *
 * Where the reference is silent:
 *  - only the `webhook` destination is offered (EventBridge and actions need infrastructure we do not run);
 *  - the custom-header secret is written as `header_value`; bearer `token`, basic `password` and
 *    `header_value` are write-only, sealed at rest, and kept on update when the method does not change;
 *  - each stream gets a Standard Webhooks signing secret (`whsec_…`), shown once, as `signing_secret` in the
 *    201 response, and never again;
 *  - `name` defaults to the stream's id and is unique per tenant (409); a tenant has at most MAX_STREAMS (409);
 *  - `subscriptions` needs at least one event type, on create too;
 *  - re-enabling a stream that holds AUTO_DISABLE_TOTAL or more failed deliveries is refused (409) until
 *    redelivery brings the count below it, as the reference describes.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import { EVENT_TYPES, type EventType } from '../events/catalogue.js';
import { countFailed } from '../events/deliveries.js';
import { resolvedEndpointProblem } from '../events/destination.js';
import { newSigningSecret } from '../events/signing.js';
import {
  countStreams,
  credentialContext,
  deleteStream,
  findStream,
  findStreamByName,
  insertStream,
  listStreams,
  newStreamId,
  signingSecretContext,
  updateStreamAsRead,
  type AuthorizationMethod,
  type EventStream,
  type WebhookConfiguration,
} from '../events/streams.js';
import { AUTO_DISABLE_TOTAL } from '../events/worker.js';
import { Conflict, InvalidInput, NotFound } from '../http/errors.js';
import { errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { ConcurrentChange, concurrentChangeConflict, nextVersion, retryOnConcurrentChange } from '../store/concurrent-change.js';
import type { Tenant } from '../store/tenants.js';
import { operation } from './operation.js';
import { checkpointList, pageBody, pageWindow } from './pagination.js';

export const MAX_STREAMS = 20;

/** PostgreSQL text cannot hold NUL: strings that reach a query refuse it up front (400, not a database error). */
const NO_NUL = '^[^\\u0000]*$';

/** Path ids are exactly 26 characters (`est_`/`evt_` + 22); any other length is a 400, an unknown one a 404. */
export const StreamParams = Type.Object({ id: Type.String({ minLength: 26, maxLength: 26, pattern: NO_NUL }) });
export const StreamEventParams = Type.Object({
  id: Type.String({ minLength: 26, maxLength: 26, pattern: NO_NUL }),
  event_id: Type.String({ minLength: 26, maxLength: 26, pattern: NO_NUL }),
});

export const EventTypeSchema = Type.Unsafe<EventType>({ type: 'string', enum: [...EVENT_TYPES], maxLength: 33 });

const Subscription = Type.Object({ event_type: EventTypeSchema }, { additionalProperties: false });
const Subscriptions = Type.Array(Subscription, { minItems: 1, maxItems: EVENT_TYPES.length });

const AuthorizationInput = Type.Object(
  {
    method: Type.Unsafe<AuthorizationMethod>({ type: 'string', enum: ['bearer', 'basic', 'custom_header'] }),
    token: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\u0000\\r\\n]*$' })),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[^:\\u0000\\r\\n]*$' })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\u0000\\r\\n]*$' })),
    header_key: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" })),
    header_value: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\u0000\\r\\n]*$' })),
  },
  { additionalProperties: false },
);
type AuthorizationInput = Static<typeof AuthorizationInput>;

const DestinationInput = Type.Object(
  {
    type: Type.String({ maxLength: 32 }),
    configuration: Type.Object(
      { webhook_endpoint: Type.String({ minLength: 1, maxLength: 2048, pattern: NO_NUL }), webhook_authorization: AuthorizationInput },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
type DestinationInput = Static<typeof DestinationInput>;

const Name = Type.String({ minLength: 1, maxLength: 128, pattern: NO_NUL });
const Status = Type.Unsafe<'enabled' | 'disabled'>({ type: 'string', enum: ['enabled', 'disabled'] });

const CreateBody = Type.Object(
  { name: Type.Optional(Name), subscriptions: Subscriptions, destination: DestinationInput, status: Type.Optional(Status) },
  { additionalProperties: false },
);
const UpdateBody = Type.Object(
  { name: Type.Optional(Name), subscriptions: Type.Optional(Subscriptions), destination: Type.Optional(DestinationInput), status: Type.Optional(Status) },
  { additionalProperties: false },
);

export const StreamView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  subscriptions: Type.Array(Type.Object({ event_type: Type.String() })),
  destination: Type.Object({
    type: Type.String(),
    configuration: Type.Object({
      webhook_endpoint: Type.String(),
      webhook_authorization: Type.Object({
        method: Type.String(),
        username: Type.Optional(Type.String()),
        header_key: Type.Optional(Type.String()),
      }),
    }),
  }),
  status: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
type StreamView = Static<typeof StreamView>;
const CreatedStreamView = Type.Object({
  ...StreamView.properties,
  signing_secret: Type.String({ description: 'The Standard Webhooks signing secret; shown only in this response' }),
});

/** The public shape: secrets are never part of it (and the response schema would drop them anyway). */
export function presentStream(stream: EventStream): StreamView {
  const auth = stream.configuration.webhook_authorization;
  return {
    id: stream.id,
    name: stream.name,
    subscriptions: stream.subscriptions.map((event_type) => ({ event_type })),
    destination: {
      type: stream.destinationType,
      configuration: {
        webhook_endpoint: stream.configuration.webhook_endpoint,
        webhook_authorization: {
          method: auth.method,
          ...(auth.username !== undefined && { username: auth.username }),
          ...(auth.header_key !== undefined && { header_key: auth.header_key }),
        },
      },
    },
    status: stream.status,
    created_at: new Date(stream.createdAt).toISOString(),
    updated_at: new Date(stream.updatedAt).toISOString(),
  };
}

export class StreamNotFound extends NotFound {
  constructor() {
    super('The event stream does not exist.', 'inexistent_event_stream');
  }
}

class StreamNameTaken extends Conflict {
  constructor() {
    super('An event stream with the same name already exists');
  }
}

export async function requireStream(services: Services, tenantId: string, id: string): Promise<EventStream> {
  const stream = await findStream(services.store.db, tenantId, id);
  if (!stream) throw new StreamNotFound();
  return stream;
}

/** Headers the delivery itself sets; a custom header may not replace them. */
const RESERVED_HEADERS = new Set(['host', 'content-type', 'content-length', 'transfer-encoding', 'connection', 'webhook-id', 'webhook-timestamp', 'webhook-signature']);

/**
 * Checks a destination against the tenant's settings and works out what to store. `existing` is the stream
 * being updated: its secret is kept when the method stays the same and no new secret is sent.
 */
async function resolveDestination(
  services: Services,
  tenant: Tenant,
  streamId: string,
  input: DestinationInput,
  existing?: EventStream,
): Promise<{ configuration: WebhookConfiguration; credentialSealed: string | null }> {
  if (input.type !== 'webhook') throw new InvalidInput('body', `destination.type: only "webhook" destinations are supported`);
  const { webhook_endpoint, webhook_authorization: auth } = input.configuration;
  const problem = await resolvedEndpointProblem(webhook_endpoint, tenant.settings.allow_insecure_webhooks === true);
  if (problem) throw new InvalidInput('body', `destination.configuration.${problem}`);
  const allowed: Record<AuthorizationMethod, (keyof AuthorizationInput)[]> = {
    bearer: ['method', 'token'],
    basic: ['method', 'username', 'password'],
    custom_header: ['method', 'header_key', 'header_value'],
  };
  const extra = Object.keys(auth).filter((k) => !allowed[auth.method].includes(k as keyof AuthorizationInput));
  if (extra.length > 0) throw new InvalidInput('body', `webhook_authorization: ${extra.join(', ')} not allowed with method ${auth.method}`);
  const secretField = { bearer: 'token', basic: 'password', custom_header: 'header_value' } as const;
  const secret = auth[secretField[auth.method]];
  const keep = existing && existing.configuration.webhook_authorization.method === auth.method ? existing.credentialSealed : null;
  if (secret === undefined && keep === null) {
    throw new InvalidInput('body', `webhook_authorization: ${secretField[auth.method]} is required with method ${auth.method}`);
  }
  if (auth.method === 'basic' && auth.username === undefined) throw new InvalidInput('body', 'webhook_authorization: username is required with method basic');
  if (auth.method === 'custom_header') {
    if (auth.header_key === undefined) throw new InvalidInput('body', 'webhook_authorization: header_key is required with method custom_header');
    if (RESERVED_HEADERS.has(auth.header_key.toLowerCase())) {
      throw new InvalidInput('body', `webhook_authorization: header_key ${auth.header_key} is set by the delivery itself`);
    }
  }
  return {
    configuration: {
      webhook_endpoint,
      webhook_authorization: {
        method: auth.method,
        ...(auth.username !== undefined && { username: auth.username }),
        ...(auth.header_key !== undefined && { header_key: auth.header_key }),
      },
    },
    credentialSealed: secret !== undefined ? services.sealer.seal(secret, credentialContext(streamId)) : keep,
  };
}

const uniqueTypes = (subscriptions: readonly { event_type: EventType }[]): string[] => [...new Set(subscriptions.map((s) => s.event_type))];

export function registerEventStreams(api: App, services: Services): void {
  const db = services.store.db;

  api.get('/event-streams', {
    ...operation(['read:event_streams'], {
      summary: 'List event streams',
      querystring: Type.Object(
        { from: Type.Optional(Type.String({ maxLength: 200 })), take: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) },
        { additionalProperties: false },
      ),
      response: { 200: checkpointList(StreamView, 'eventStreams') },
    }),
    handler: async (request) => {
      const streams = (await listStreams(db, request.tenant.id)).map(presentStream);
      // Always the object form: the reference shows `{ eventStreams: [] }` even without paging parameters.
      const window = { ...pageWindow({ ...request.query, take: request.query.take ?? 50 }), checkpoint: true };
      return pageBody(window, request.query, streams.slice(window.offset, window.offset + window.limit), streams.length, 'eventStreams');
    },
  });

  api.post('/event-streams', {
    ...operation(['create:event_streams'], {
      summary: 'Create an event stream',
      body: CreateBody,
      response: {
        201: CreatedStreamView,
        ...errorResponses('management', { 409: 'conflict: a stream with this name exists, or the tenant has the most streams it may' }),
      },
    }),
    handler: async (request, reply) => {
      const tenant = request.tenant;
      const body = request.body;
      const id = newStreamId();
      const name = body.name ?? id;
      if (await findStreamByName(db, tenant.id, name)) throw new StreamNameTaken();
      if ((await countStreams(db, tenant.id)) >= MAX_STREAMS) throw new Conflict(`A tenant may have at most ${MAX_STREAMS} event streams`);
      const destination = await resolveDestination(services, tenant, id, body.destination);
      const signingSecret = newSigningSecret();
      const now = Date.now();
      const stream: EventStream = {
        id,
        tenantId: tenant.id,
        name,
        status: body.status ?? 'enabled',
        subscriptions: uniqueTypes(body.subscriptions),
        destinationType: 'webhook',
        configuration: destination.configuration,
        credentialSealed: destination.credentialSealed,
        signingSecretSealed: services.sealer.seal(signingSecret, signingSecretContext(id)),
        consecutiveFailures: 0,
        createdAt: now,
        updatedAt: now,
      };
      try {
        await insertStream(db, stream);
      } catch (err) {
        // Two creates racing on one name: the unique constraint decides.
        if (await findStreamByName(db, tenant.id, name)) throw new StreamNameTaken();
        throw err;
      }
      return reply.code(201).send({ ...presentStream(stream), signing_secret: signingSecret });
    },
  });

  api.get('/event-streams/:id', {
    ...operation(['read:event_streams'], {
      summary: 'Get an event stream',
      params: StreamParams,
      response: { 200: StreamView, ...errorResponses('management', { 404: 'inexistent_event_stream' }) },
    }),
    handler: async (request) => presentStream(await requireStream(services, request.tenant.id, request.params.id)),
  });

  api.patch('/event-streams/:id', {
    ...operation(['update:event_streams'], {
      summary: 'Update an event stream',
      params: StreamParams,
      body: UpdateBody,
      response: {
        200: StreamView,
        ...errorResponses('management', {
          404: 'inexistent_event_stream',
          409: concurrentChangeConflict('conflict (a stream with this name exists), too_many_failed_deliveries (redeliver them before enabling)'),
        }),
      },
    }),
    handler: async (request) => {
      const tenant = request.tenant;
      const body = request.body;
      // Read, change, conditional write; again when another request changed the stream meanwhile, so that two
      // PATCHes of different fields both land (store/concurrent-change.ts).
      const updated = await retryOnConcurrentChange('event stream', async () => {
        const stream = await requireStream(services, tenant.id, request.params.id);
        const name = body.name ?? stream.name;
        const nameTaken = async () => {
          const holder = await findStreamByName(db, tenant.id, name);
          return holder !== undefined && holder.id !== stream.id;
        };
        if (name !== stream.name && (await nameTaken())) throw new StreamNameTaken();
        const destination = body.destination ? await resolveDestination(services, tenant, stream.id, body.destination, stream) : undefined;
        const enabling = body.status === 'enabled' && stream.status === 'disabled';
        if (enabling && (await countFailed(db, stream.id)) >= AUTO_DISABLE_TOTAL) {
          throw new Conflict(
            `The event stream holds ${AUTO_DISABLE_TOTAL} or more failed deliveries; redeliver them before enabling it again`,
            'too_many_failed_deliveries',
          );
        }
        const updated: EventStream = {
          ...stream,
          name,
          status: body.status ?? stream.status,
          subscriptions: body.subscriptions ? uniqueTypes(body.subscriptions) : stream.subscriptions,
          ...(destination && { configuration: destination.configuration, credentialSealed: destination.credentialSealed }),
          consecutiveFailures: enabling ? 0 : stream.consecutiveFailures,
          updatedAt: nextVersion(stream.updatedAt, Date.now()),
        };
        let written: boolean;
        try {
          written = await updateStreamAsRead(db, stream, updated);
        } catch (err) {
          if (await nameTaken()) throw new StreamNameTaken();
          throw err;
        }
        if (!written) throw new ConcurrentChange();
        return updated;
      });
      return presentStream(updated);
    },
  });

  api.delete('/event-streams/:id', {
    ...operation(['delete:event_streams'], {
      summary: 'Delete an event stream, with its delivery records',
      params: StreamParams,
      response: { 204: noContent('Deleted, with its delivery records'), ...errorResponses('management', { 404: 'inexistent_event_stream' }) },
    }),
    handler: async (request, reply) => {
      if (!(await deleteStream(db, request.tenant.id, request.params.id))) throw new StreamNotFound();
      return reply.code(204).send();
    },
  });
}

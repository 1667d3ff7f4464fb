/**
 * /api/v2/connections (B.8): where users come from. This server has these strategies: `auth0` (a database of
 * users with passwords), `email` and `sms` (passwordless), and the upstream identity providers of federation/
 * (`oidc`, `oauth2`, `samlp` and the social presets), whose secret options are write-only and sealed at rest. Options are checked per strategy for the fields it
 * knows, and any other option is stored and echoed as given. PATCH replaces `options` as a whole (as the
 * reference does: send every option). `name` and `strategy` never change. Deleting a connection deletes its
 * users in the same transaction.
 * Enabled clients: `enabled_clients` on create and patch (deprecated, still sent by SDKs), or
 * `PATCH /connections/{id}/clients` and `GET /connections/{id}/clients`.
 */
import { Type, type Static, type TSchema } from '@fastify/type-provider-typebox';
import { Compile } from 'typebox/compile';
import { newId } from '../crypto/ids.js';
import { Conflict, InvalidInput, NotFound } from '../http/errors.js';
import { asSent, errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { listClients } from '../store/clients.js';
import { ConcurrentChange, concurrentChangeConflict, retryOnConcurrentChange } from '../store/concurrent-change.js';
import {
  deleteConnection,
  findConnectionAsRead,
  findConnectionById,
  findConnectionByName,
  insertConnection,
  listConnections,
  listEnabledClients,
  listEnabledClientsByConnection,
  setConnectionClients,
  updateConnectionAsRead,
  type Connection,
  type ConnectionProperties,
} from '../store/connections.js';
import { sealConnectionSecrets, withoutConnectionSecrets } from '../messaging/sms.js';
import { facebookStrategy } from '../federation/facebook.js';
import { githubStrategy } from '../federation/github.js';
import { linkedinStrategy } from '../federation/linkedin.js';
import { appleStrategy } from '../federation/apple.js';
import { windowsliveStrategy } from '../federation/windowslive.js';
import { samlpStrategy } from '../federation/samlp.js';
import { googleStrategy } from '../federation/google-oauth2.js';
import { oauth2Strategy } from '../federation/oauth2.js';
import { oidcStrategy } from '../federation/oidc.js';
import { sealStrategySecrets, withSecretsOpened, withoutStrategySecrets } from '../federation/secrets.js';
import { federationStrategy } from '../federation/strategies.js';
import { operation } from './operation.js';
import { pagedList, paginate, pagingFields } from './pagination.js';
import { selectFields } from './user-view.js';

export const SUPPORTED_STRATEGIES = ['auth0', 'email', 'sms', 'oidc', 'oauth2', 'google-oauth2', 'github', 'windowslive', 'facebook', 'linkedin', 'apple', 'samlp'] as const;
export type SupportedStrategy = (typeof SUPPORTED_STRATEGIES)[number];

const CONNECTION_ID = '^con_[A-Za-z0-9]{16}$';
const NAME = Type.String({ minLength: 1, maxLength: 128, pattern: '^[a-zA-Z0-9](-[a-zA-Z0-9]|[a-zA-Z0-9])*$' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Flag = Type.Optional(Type.Boolean());

const Totp = Type.Object(
  { length: Type.Optional(Type.Integer({ minimum: 4, maximum: 12 })), time_step: Type.Optional(Type.Integer({ minimum: 30, maximum: 86_400 })) },
  { additionalProperties: false },
);

/** `options` of `strategy: "auth0"` ([OAS-M] ConnectionOptionsAuth0): the known fields typed, others kept. */
const DatabaseOptions = Type.Object(
  {
    requires_username: Flag,
    validation: Type.Optional(
      Nullable(
        Type.Object({
          username: Type.Optional(
            Nullable(
              Type.Object(
                { min: Type.Optional(Type.Integer({ minimum: 1, maximum: 128 })), max: Type.Optional(Type.Integer({ minimum: 1, maximum: 128 })) },
                { additionalProperties: false },
              ),
            ),
          ),
        }),
      ),
    ),
    passwordPolicy: Type.Optional(
      Nullable(Type.Union([Type.Literal('none'), Type.Literal('low'), Type.Literal('fair'), Type.Literal('good'), Type.Literal('excellent')])),
    ),
    password_complexity_options: Type.Optional(
      Nullable(Type.Object({ min_length: Type.Optional(Type.Integer({ minimum: 1, maximum: 128 })) }, { additionalProperties: false })),
    ),
    password_history: Type.Optional(
      Nullable(Type.Object({ enable: Flag, size: Type.Optional(Type.Integer({ minimum: 0, maximum: 24 })) }, { additionalProperties: false })),
    ),
    password_no_personal_info: Type.Optional(Nullable(Type.Object({ enable: Flag }, { additionalProperties: false }))),
    password_dictionary: Type.Optional(
      Nullable(
        Type.Object(
          { enable: Flag, dictionary: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 2000 })) },
          { additionalProperties: false },
        ),
      ),
    ),
    brute_force_protection: Flag,
    disable_signup: Flag,
    disable_self_service_change_password: Flag,
    import_mode: Flag,
    enabledDatabaseCustomization: Flag,
    customScripts: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 100_000 }))),
    configuration: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 10_000 }))),
  },
  { additionalProperties: true },
);

/** `options` of `strategy: "email"`. */
const EmailOptions = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 128 })),
    email: Type.Optional(
      Type.Object(
        {
          from: Type.Optional(Type.String({ maxLength: 320 })),
          subject: Type.Optional(Type.String({ maxLength: 1000 })),
          body: Type.Optional(Type.String({ maxLength: 100_000 })),
          syntax: Type.Optional(Type.Literal('liquid')),
        },
        { additionalProperties: false },
      ),
    ),
    // A JSON string in the reference; older tenants hold an object, which is kept as it is.
    authParams: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 1024 }), Type.Object({}, { additionalProperties: true })])),
    totp: Type.Optional(Totp),
    brute_force_protection: Flag,
    disable_signup: Flag,
  },
  { additionalProperties: true },
);

/** `options` of `strategy: "sms"`. */
const SmsOptions = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 128 })),
    from: Type.Optional(Type.String({ maxLength: 64 })),
    template: Type.Optional(Type.String({ maxLength: 1600 })),
    syntax: Type.Optional(Type.Union([Type.Literal('liquid'), Type.Literal('md_with_macros')])),
    totp: Type.Optional(Totp),
    provider: Type.Optional(Type.Union([Type.Literal('twilio'), Type.Literal('sms_gateway')])),
    twilio_sid: Type.Optional(Type.String({ maxLength: 255 })),
    twilio_token: Type.Optional(Type.String({ maxLength: 255 })),
    messaging_service_sid: Type.Optional(Type.String({ maxLength: 255 })),
    gateway_url: Type.Optional(Type.String({ maxLength: 2000, pattern: '^https?://' })),
    gateway_authentication: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    forward_req_info: Flag,
    brute_force_protection: Flag,
    disable_signup: Flag,
  },
  { additionalProperties: true },
);

const OPTION_VALIDATORS = {
  auth0: Compile(DatabaseOptions),
  email: Compile(EmailOptions),
  sms: Compile(SmsOptions),
  oidc: Compile(oidcStrategy.optionsSchema),
  oauth2: Compile(oauth2Strategy.optionsSchema),
  'google-oauth2': Compile(googleStrategy.optionsSchema),
  github: Compile(githubStrategy.optionsSchema),
  windowslive: Compile(windowsliveStrategy.optionsSchema),
  facebook: Compile(facebookStrategy.optionsSchema),
  linkedin: Compile(linkedinStrategy.optionsSchema),
  apple: Compile(appleStrategy.optionsSchema),
  samlp: Compile(samlpStrategy.optionsSchema),
} as const;

const Options = Type.Record(Type.String(), Type.Unknown(), { description: 'Depends on the strategy (auth0, email, sms, oidc, oauth2, google-oauth2, github, windowslive, facebook, linkedin, apple, samlp); secrets (client_secret, app_secret, private keys) are write-only' });
const Metadata = Type.Record(Type.String({ maxLength: 255 }), Type.String({ maxLength: 255 }), { maxProperties: 10 });
const Active = Type.Object({ active: Type.Boolean() }, { additionalProperties: false });
const ClientId = Type.String({ minLength: 1, maxLength: 64 });

/** Fields that may be set on create and patch. */
const Settable = {
  display_name: Type.Optional(Type.String({ maxLength: 128 })),
  options: Type.Optional(Options),
  enabled_clients: Type.Optional(Type.Array(ClientId, { maxItems: 1000, description: 'Deprecated: use PATCH /connections/{id}/clients' })),
  is_domain_connection: Flag,
  show_as_button: Flag,
  realms: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 10 })),
  metadata: Type.Optional(Metadata),
  authentication: Type.Optional(Active),
  connected_accounts: Type.Optional(Active),
};

const CreateBody = Type.Object({ name: NAME, strategy: Type.String({ minLength: 1, maxLength: 128 }), ...Settable }, { additionalProperties: false });

/** `name` and `strategy` are accepted only unchanged (tools send back what they read). */
const UpdateBody = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: 128 })), strategy: Type.Optional(Type.String({ maxLength: 128 })), ...Settable },
  { additionalProperties: false },
);

const ConnectionBody = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    strategy: Type.String(),
    options: Options,
    enabled_clients: Type.Array(Type.String()),
    realms: Type.Array(Type.String()),
    is_domain_connection: Type.Boolean(),
  },
  { additionalProperties: true },
);

const IdParams = Type.Object({ id: Type.String({ pattern: CONNECTION_ID, maxLength: 20 }) });
const FieldsQuery = {
  fields: Type.Optional(Type.String({ maxLength: 2000 })),
  include_fields: Type.Optional(Type.Boolean()),
};

const ClientsPatch = Type.Array(
  Type.Object({ client_id: ClientId, status: Type.Boolean() }, { additionalProperties: false }),
  { minItems: 1, maxItems: 50 },
);

export class ConnectionNotFound extends NotFound {
  constructor() {
    super('The connection does not exist', 'inexistent_connection');
  }
}

class ConnectionConflict extends Conflict {
  constructor(name: string) {
    super(`A connection with the name ${name} already exists`, 'connection_conflict');
  }
}

type ConnectionView = Static<typeof ConnectionBody>;

function present(connection: Connection, enabledClients: string[]): ConnectionView {
  const { tenant_id: _tenant, id, name, strategy, options, display_name, realms, is_domain_connection, ...rest } = connection;
  return {
    id,
    name,
    ...(display_name !== undefined && { display_name }),
    strategy,
    // Connection secrets are write-only.
    options: shownOptions(strategy, options),
    enabled_clients: enabledClients,
    realms: realms ?? [name],
    is_domain_connection: is_domain_connection ?? false,
    ...rest,
  };
}

function shownOptions(strategy: string, options: Record<string, unknown>): Record<string, unknown> {
  const federated = federationStrategy(strategy);
  return federated ? withoutStrategySecrets(federated, options) : withoutConnectionSecrets(options);
}

/** The options a strategy derives from what was sent (samlp: the certificate's PEM and thumbprints). */
function normalizedOptions(strategy: string, options: Record<string, unknown>): Record<string, unknown> {
  return federationStrategy(strategy)?.normalizeOptions?.(options) ?? options;
}

/** `options` as stored: secrets sealed (a secret not sent keeps its sealed value from `previous`). */
function storedOptions(services: Services, strategy: string, connectionId: string, options: Record<string, unknown>, previous?: Record<string, unknown>): Record<string, unknown> {
  const federated = federationStrategy(strategy);
  if (federated) return sealStrategySecrets(federated, services.sealer, connectionId, options, previous);
  return strategy === 'sms' ? sealConnectionSecrets(services.sealer, connectionId, options, previous) : options;
}

function isSupported(strategy: string): strategy is SupportedStrategy {
  return (SUPPORTED_STRATEGIES as readonly string[]).includes(strategy);
}

function unsupportedStrategy(strategy: string): InvalidInput {
  return new InvalidInput(
    'body',
    `The strategy "${strategy}" is not supported: this server supports the strategies ${SUPPORTED_STRATEGIES.join(', ')}`,
  );
}

/** Checks `options` against the strategy's schema and its cross-field rules. */
function validateOptions(strategy: SupportedStrategy, options: Record<string, unknown>): void {
  const validator = OPTION_VALIDATORS[strategy];
  const value: unknown = options; // checked as unknown, so `options` keeps its record type below
  if (!validator.Check(value)) {
    const [first] = validator.Errors(options);
    const where = first?.instancePath ? `options${first.instancePath.replace(/\//g, '.')}` : 'options';
    throw new InvalidInput('body', `Payload validation error: ${where} ${first?.message ?? 'is invalid'} (strategy ${strategy})`);
  }
  if (strategy === 'auth0') {
    const username = (options as Static<typeof DatabaseOptions>).validation?.username;
    if (username?.min !== undefined && username.max !== undefined && username.min > username.max) {
      throw new InvalidInput('body', 'options.validation.username: min must not be greater than max');
    }
  }
  const problem = federationStrategy(strategy)?.checkOptions(options);
  if (problem) throw new InvalidInput('body', `${problem} (strategy ${strategy})`);
  if (strategy === 'email' && typeof options.authParams === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(options.authParams);
    } catch {
      parsed = undefined;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new InvalidInput('body', 'options.authParams must be a JSON object encoded as a string');
    }
  }
}

/**
 * What a new connection of the strategy starts with, under what the caller sent: the settings it honours, shown
 * as in effect (tools that fill in a schema's defaults, as auth0-deploy-cli does, then read back what they wrote).
 */
function defaultOptions(strategy: SupportedStrategy): Record<string, unknown> {
  switch (strategy) {
    case 'auth0':
      return { passwordPolicy: 'good', brute_force_protection: true, disable_self_service_change_password: false };
    case 'email':
    case 'sms':
      return { brute_force_protection: true };
    case 'oidc':
    case 'oauth2':
    case 'google-oauth2':
    case 'github':
    case 'windowslive':
    case 'facebook':
    case 'linkedin':
    case 'apple':
    case 'samlp':
      return federationStrategy(strategy)!.defaultOptions();
  }
}

async function assertClientsExist(services: Services, tenantId: string, clientIds: readonly string[]): Promise<void> {
  if (clientIds.length === 0) return;
  const known = new Set((await listClients(services.store.db, tenantId)).map((c) => c.client_id));
  const unknown = clientIds.filter((id) => !known.has(id));
  if (unknown.length > 0) throw new InvalidInput('body', `Unknown client ids: ${unknown.slice(0, 5).join(', ')}`);
}

async function find(services: Services, tenantId: string, id: string): Promise<Connection> {
  const connection = await findConnectionById(services.store.db, tenantId, id);
  if (!connection) throw new ConnectionNotFound();
  return connection;
}

/** The settable fields of a body, as stored properties. */
function settableProperties(body: Partial<Static<typeof UpdateBody>>): Partial<ConnectionProperties> {
  const { name: _name, strategy: _strategy, enabled_clients: _clients, ...properties } = body;
  return properties;
}

export function registerConnections(api: App, services: Services): void {
  const db = services.store.db;

  api.get('/connections', {
    ...operation(['read:connections'], {
      summary: 'List connections',
      querystring: Type.Object(
        {
          ...pagingFields,
          ...FieldsQuery,
          strategy: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 50 })),
          name: Type.Optional(Type.String({ maxLength: 128 })),
        },
        { additionalProperties: false },
      ),
      response: {
        200: pagedList(
          Type.Partial(ConnectionBody, { additionalProperties: true, description: 'A connection, or with fields its selected fields' }),
          'connections',
        ),
      },
    }),
    handler: async (request) => {
      const { strategy, name, fields, include_fields, ...paging } = request.query;
      let all = await listConnections(db, request.tenant.id);
      if (strategy) {
        const wanted = new Set(strategy.flatMap((s) => s.split(',')).map((s) => s.trim()));
        all = all.filter((c) => wanted.has(c.strategy));
      }
      if (name !== undefined) all = all.filter((c) => c.name === name);
      const clients = await listEnabledClientsByConnection(db, request.tenant.id);
      const views = all.map((c) => selectFields(present(c, clients.get(c.id) ?? []), fields, include_fields));
      return paginate(views, paging, 'connections');
    },
  });

  api.post('/connections', {
    ...operation(['create:connections'], {
      summary: 'Create a connection',
      body: CreateBody,
      response: { 201: ConnectionBody, ...errorResponses('management', { 409: 'connection_conflict: a connection with this name exists' }) },
    }),
    handler: async (request, reply) => {
      const { name, strategy, enabled_clients = [], ...fields } = request.body;
      if (!isSupported(strategy)) throw unsupportedStrategy(strategy);
      const id = newId.connection();
      const sent = { ...defaultOptions(strategy), ...fields.options };
      validateOptions(strategy, sent);
      const options = storedOptions(services, strategy, id, normalizedOptions(strategy, sent));
      await assertClientsExist(services, request.tenant.id, enabled_clients);
      if (await findConnectionByName(db, request.tenant.id, name)) throw new ConnectionConflict(name);
      const connection: Connection = { ...settableProperties(fields), id, tenant_id: request.tenant.id, name, strategy, options };
      const clients = [...new Set(enabled_clients)];
      try {
        await insertConnection(db, connection, clients);
      } catch (err) {
        // Two creates racing on one name: the unique constraint decides.
        if (await findConnectionByName(db, request.tenant.id, name)) throw new ConnectionConflict(name);
        throw err;
      }
      return reply.code(201).send(present(connection, clients.sort()));
    },
  });

  api.get('/connections/:id', {
    ...operation(['read:connections'], {
      summary: 'Get a connection',
      params: IdParams,
      querystring: Type.Object(FieldsQuery, { additionalProperties: false }),
      response: {
        200: asSent(Type.Partial(ConnectionBody, { additionalProperties: true, description: 'The connection, or with fields its selected fields' })),
        ...errorResponses('management', { 404: 'inexistent_connection' }),
      },
    }),
    handler: async (request) => {
      const connection = await find(services, request.tenant.id, request.params.id);
      const view = present(connection, await listEnabledClients(db, connection.id));
      return selectFields(view, request.query.fields, request.query.include_fields);
    },
  });

  api.patch('/connections/:id', {
    ...operation(['update:connections'], {
      summary: 'Update a connection',
      params: IdParams,
      body: UpdateBody,
      response: { 200: ConnectionBody, ...errorResponses('management', { 404: 'inexistent_connection', 409: concurrentChangeConflict() }) },
    }),
    handler: async (request) => {
      const body = request.body;
      // Read, change, conditional write; again when another request changed the connection meanwhile, so that two
      // PATCHes of different fields both land (store/concurrent-change.ts).
      const updated = await retryOnConcurrentChange('connection', async () => {
        const read = await findConnectionAsRead(db, request.tenant.id, request.params.id);
        if (!read) throw new ConnectionNotFound();
        const connection = read.connection;
        if (body.name !== undefined && body.name !== connection.name) throw new InvalidInput('body', 'The name of a connection cannot be changed');
        if (body.strategy !== undefined && body.strategy !== connection.strategy) {
          throw new InvalidInput('body', 'The strategy of a connection cannot be changed');
        }
        const strategy = connection.strategy;
        const federated = federationStrategy(strategy);
        if (body.options !== undefined) {
          if (!isSupported(strategy)) throw unsupportedStrategy(strategy);
          // Secrets are write-only: options sent back without them are checked with the ones kept.
          validateOptions(strategy, federated ? withSecretsOpened(federated, services.sealer, connection.id, connection.options, body.options) : body.options);
        }
        if (body.enabled_clients) await assertClientsExist(services, request.tenant.id, body.enabled_clients);
        const updated: Connection = { ...connection, ...settableProperties(body) };
        if (body.options !== undefined) updated.options = storedOptions(services, strategy, connection.id, normalizedOptions(strategy, body.options), connection.options);
        if (!(await updateConnectionAsRead(db, updated, read.readAt, body.enabled_clients))) throw new ConcurrentChange();
        return updated;
      });
      return present(updated, await listEnabledClients(db, updated.id));
    },
  });

  api.delete('/connections/:id', {
    ...operation(['delete:connections'], {
      summary: 'Delete a connection and its users',
      params: IdParams,
      response: { 204: noContent('Deleted, with its users'), ...errorResponses('management', { 404: 'inexistent_connection' }) },
    }),
    handler: async (request, reply) => {
      // Already gone is as good as deleted (204 either way, as in the reference).
      await deleteConnection(db, request.tenant.id, request.params.id);
      return reply.code(204).send();
    },
  });

  api.get('/connections/:id/clients', {
    ...operation(['read:connections'], {
      summary: 'List the clients a connection is enabled for',
      params: IdParams,
      querystring: Type.Object({ take: pagingFields.take, from: pagingFields.from }, { additionalProperties: false }),
      response: {
        200: Type.Unsafe<unknown>(asSent(Type.Object({ clients: Type.Array(Type.Object({ client_id: Type.String() })), next: Type.Optional(Type.String()) }))),
        ...errorResponses('management', { 404: 'inexistent_connection' }),
      },
    }),
    handler: async (request) => {
      const connection = await find(services, request.tenant.id, request.params.id);
      const clients = (await listEnabledClients(db, connection.id)).map((client_id) => ({ client_id }));
      // Always the checkpoint form: `{ clients, next? }`.
      return paginate(clients, { take: request.query.take ?? 50, ...(request.query.from !== undefined && { from: request.query.from }) }, 'clients');
    },
  });

  api.patch('/connections/:id/clients', {
    ...operation(['update:connections'], {
      summary: 'Enable or disable a connection for clients',
      params: IdParams,
      body: ClientsPatch,
      response: { 204: noContent('Updated'), ...errorResponses('management', { 404: 'inexistent_connection' }) },
    }),
    handler: async (request, reply) => {
      const connection = await find(services, request.tenant.id, request.params.id);
      await assertClientsExist(
        services,
        request.tenant.id,
        request.body.filter((c) => c.status).map((c) => c.client_id),
      );
      await setConnectionClients(db, connection, request.body);
      return reply.code(204).send();
    },
  });
}

/**
 * /api/v2/users and /api/v2/users-by-email (B.5, B.6): users of the tenant's connections, their metadata and
 * linked identities.
 *
 *  - Ids: `auth0|<24 hex>` for database connections (the caller may choose the part after `|`), `email|…` and
 *    `sms|…` for passwordless. They arrive URL-encoded (`auth0%7C…`); the router decodes them.
 *  - Passwords are checked against the connection's policy and stored as argon2id hashes; no hash ever leaves.
 *  - PATCH replaces root fields and merges `user_metadata` / `app_metadata` one level deep (a `null` value deletes
 *    a key, `{}` clears all, nested objects are replaced, not merged).
 *  - Linking (library rule 8): the secondary stops existing on its own (not listed, 404 by its own id) and is
 *    shown only in the primary's `identities`; metadata is not merged, and unlinking gives the secondary back
 *    with its own metadata untouched.
 *  - A user's own token (current_user scopes) acts on that user alone (authenticate.ts `assertActsOnSelf`), may
 *    change its user_metadata only, and links only with `link_with`.
 *  - Each change raises its event in the change's own transaction (the outbox): `user.created`, `user.updated`
 *    (with `previous_object`; linking and unlinking update the primary), `user.deleted`. The objects come from
 *    event-objects.ts, which every other path that changes users uses too.
 *
 * This file holds the routes; how a user is shown is user-view.ts, the rules its fields obey user-rules.ts, and
 * the `q` search syntax user-search.ts.
 */
import { endSessionsOfUsers } from '../auth-api/backchannel-logout/queue.js';
import { Type, type Static, type TSchema } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import type { Kysely } from 'kysely';
import { normalizeEmail } from '../connections/email-address.js';
import { newUserId } from '../crypto/ids.js';
import { hashPassword } from '../crypto/passwords.js';
import { eventContextFrom } from '../events/context.js';
import { emitEvent } from '../events/outbox.js';
import { Conflict, InvalidInput, NotFound, ProtocolError } from '../http/errors.js';
import { asSent, errorResponses, noContent } from '../http/responses.js';
import { queueVerificationEmail } from '../messaging/account-emails.js';
import type { App, Services } from '../services.js';
import { findConnectionByName, type Connection } from '../store/connections.js';
import { ConcurrentChange, concurrentChangeConflict, retryOnConcurrentChange } from '../store/concurrent-change.js';
import type { Database } from '../store/schema.js';
import {
  deleteUser,
  findPrimaryUser,
  findUser,
  findUserInConnection,
  findUsersByEmail,
  insertUserWith,
  linkUser,
  listLinkedIdentities,
  listUsers,
  newUser,
  unlinkUser,
  updateUsersAsRead,
  userIdExists,
  USER_SORT_FIELDS,
  type User,
  type UserProfile,
  type UserSortField,
} from '../store/users.js';
import { assertActsOnSelf, InsufficientScope } from './authenticate.js';
import { deletedUserEventObject, userEventObject } from './event-objects.js';
import { withUpstreamTokens } from '../federation/idp-tokens.js';
import { operation } from './operation.js';
import { logRow, requestOrigin } from '../logs/log-event.js';
import { pageBody, pagedList, pageWindow, pagingFields } from './pagination.js';
import {
  assertPasswordAccepted,
  checkMetadata,
  checkUsername,
  databaseOptions,
  isDuplicate,
  mergeMetadata,
  personalInfo,
  strategyOf,
} from './user-rules.js';
import { parseUserSearch } from './user-search.js';
import { contextFor, Identity, presentIdentities, presentMany, presentOne, PROVIDER_OF_STRATEGY, selectFields, UserBody } from './user-view.js';

// ---- schemas ----

/** `<provider>|<id>`; the provider part is what this server writes (auth0, email, sms) or any plain name. */
export const USER_ID_PATTERN = '^[A-Za-z0-9_.-]{1,64}\\|\\S{1,255}$';
const UserId = Type.String({ minLength: 3, maxLength: 321, pattern: USER_ID_PATTERN });
const UserIdParams = Type.Object({ id: UserId });
const PHONE = '^\\+[0-9]{1,15}$';
/** Bounds the body; the connection's policy decides what is long enough (and refuses past 256 characters). */
const Password = Type.String({ minLength: 1, maxLength: 4096 });
const Metadata = Type.Record(Type.String(), Type.Unknown());
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Flag = Type.Optional(Type.Boolean());
const Email = Type.String({ format: 'email', maxLength: 320 });

const CreateUserBody = Type.Object(
  {
    connection: Type.String({ minLength: 1, maxLength: 128 }),
    email: Type.Optional(Email),
    phone_number: Type.Optional(Type.String({ pattern: PHONE })),
    password: Type.Optional(Password),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^\\S+$' })),
    email_verified: Flag,
    verify_email: Flag,
    phone_verified: Flag,
    blocked: Flag,
    given_name: Type.Optional(Type.String({ minLength: 1, maxLength: 150 })),
    family_name: Type.Optional(Type.String({ minLength: 1, maxLength: 150 })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    nickname: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    picture: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, format: 'uri' })),
    user_metadata: Type.Optional(Metadata),
    app_metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);

const UpdateUserBody = Type.Object(
  {
    blocked: Flag,
    email_verified: Flag,
    email: Type.Optional(Nullable(Email)),
    phone_number: Type.Optional(Nullable(Type.String({ pattern: PHONE }))),
    phone_verified: Flag,
    user_metadata: Type.Optional(Metadata),
    app_metadata: Type.Optional(Metadata),
    given_name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 150 }))),
    family_name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 150 }))),
    name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 300 }))),
    nickname: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 300 }))),
    picture: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 2000, format: 'uri' }))),
    verify_email: Flag,
    verify_phone_number: Flag,
    password: Type.Optional(Password),
    connection: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    username: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 128 }))),
  },
  { additionalProperties: false },
);
type UpdateUserBody = Static<typeof UpdateUserBody>;

const LinkBody = Type.Object(
  {
    link_with: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384 })),
    provider: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' })),
    user_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255, pattern: '^\\S+$' }), Type.Integer({ minimum: 0 })])),
    connection_id: Type.Optional(Type.String({ pattern: '^con_[A-Za-z0-9]{16}$' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

const IdentityParams = Type.Object({
  id: UserId,
  provider: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' }),
  user_id: Type.String({ minLength: 1, maxLength: 255 }),
});

const FieldsQuery = {
  fields: Type.Optional(Type.String({ maxLength: 2000 })),
  include_fields: Type.Optional(Type.Boolean()),
};

const ListQuery = Type.Object(
  {
    ...pagingFields,
    ...FieldsQuery,
    q: Type.Optional(Type.String({ maxLength: 2000 })),
    search_engine: Type.Optional(Type.Union([Type.Literal('v1'), Type.Literal('v2'), Type.Literal('v3')])),
    sort: Type.Optional(Type.String({ pattern: '^[a-z_]+:(1|-1)$', maxLength: 64 })),
    connection: Type.Optional(Type.String({ maxLength: 128 })),
    primary_order: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

// ---- errors ----

export class UserNotFound extends NotFound {
  constructor(description = 'The user does not exist.') {
    super(description, 'inexistent_user');
  }
}

class UserExists extends Conflict {
  constructor() {
    super('The user already exists.', 'user_exists');
  }
}

class IdentityConflict extends Conflict {
  constructor(description: string) {
    super(description, 'identity_conflict');
  }
}

class IdentityNotFound extends NotFound {
  constructor() {
    super('The identity is not linked to this user', 'inexistent_identity');
  }
}

/** A 403 for what the token's kind (not its scopes) does not allow. */
class NotAllowedForToken extends ProtocolError {
  constructor(description: string) {
    super(403, 'insufficient_scope', description);
  }
}
// ---- PATCH authority ----

/** What the token may change in a PATCH: everything (update:users), metadata (update:users_app_metadata), or its own user_metadata. */
function assertMayPatch(request: FastifyRequest, user: User, body: UpdateUserBody): void {
  const { principal } = request;
  const keys = Object.keys(body);
  if (principal.selfOnly) {
    if (keys.some((k) => k !== 'user_metadata')) {
      throw new NotAllowedForToken("A token for the current user may change the user's user_metadata only.");
    }
    const patch = body.user_metadata ?? {};
    if (principal.scopes.has('update:current_user_metadata')) return;
    const current = user.user_metadata;
    const entries = Object.entries(patch);
    if (entries.length === 0 && Object.keys(current).length > 0 && !principal.scopes.has('delete:current_user_metadata')) {
      throw new InsufficientScope(['update:current_user_metadata', 'delete:current_user_metadata']);
    }
    for (const [key, value] of entries) {
      if (value === null) {
        if (!principal.scopes.has('delete:current_user_metadata')) throw new InsufficientScope(['update:current_user_metadata', 'delete:current_user_metadata']);
      } else if (Object.hasOwn(current, key)) {
        throw new InsufficientScope(['update:current_user_metadata']);
      } else if (!principal.scopes.has('create:current_user_metadata')) {
        throw new InsufficientScope(['update:current_user_metadata', 'create:current_user_metadata']);
      }
    }
    return;
  }
  if (principal.scopes.has('update:users')) return;
  if (keys.some((k) => k !== 'app_metadata' && k !== 'user_metadata')) throw new InsufficientScope(['update:users']);
}

const IDENTITY_FIELDS = ['email', 'email_verified', 'verify_email', 'phone_number', 'phone_verified', 'verify_phone_number', 'username', 'password'] as const;

/** Applies the identity fields of a PATCH (email, phone, username, password) to one identity. */
async function patchIdentity(identity: User, primary: User, connection: Connection, body: UpdateUserBody, now: number): Promise<User> {
  const strategy = strategyOf(connection);
  const next: User = { ...identity };
  if (body.email !== undefined) {
    if (body.email === null && strategy !== 'sms') throw new InvalidInput('body', `email cannot be removed from a user of a ${strategy} connection`);
    const email = body.email === null ? null : normalizeEmail(body.email);
    if (email !== identity.email) next.email_verified = false;
    next.email = email;
  }
  if (body.email_verified !== undefined) next.email_verified = body.email_verified;
  if (body.phone_number !== undefined) {
    if (body.phone_number === null && strategy === 'sms') throw new InvalidInput('body', 'phone_number cannot be removed from a user of an sms connection');
    if (body.phone_number !== identity.phone_number) next.phone_verified = false;
    next.phone_number = body.phone_number;
  }
  if (body.phone_verified !== undefined) next.phone_verified = body.phone_verified;
  if (body.username !== undefined) {
    const requiresUsername = strategy === 'auth0' && databaseOptions(connection).requires_username === true;
    if (body.username === null) {
      if (requiresUsername) throw new InvalidInput('body', 'username cannot be removed: the connection requires one');
    } else {
      if (!requiresUsername) throw new InvalidInput('body', 'Cannot set username for a connection that does not require one (requires_username)');
      checkUsername(connection, body.username);
    }
    next.username = body.username?.toLowerCase() ?? null;
  }
  if (body.password !== undefined) {
    if (strategy !== 'auth0') throw new InvalidInput('body', 'Only users of database (auth0) connections have passwords');
    assertPasswordAccepted(connection, body.password, personalInfo(next, primary));
    next.password_hash = await hashPassword(body.password);
    next.last_password_reset = now;
  }
  return next;
}

/** Applies the root fields of a PATCH (profile, flags, metadata) to the primary user. */
function patchRoot(user: User, body: UpdateUserBody): User {
  const profile: UserProfile = { ...user.profile };
  for (const field of ['given_name', 'family_name', 'name', 'nickname', 'picture'] as const) {
    const value = body[field];
    if (value === null) delete profile[field];
    else if (value !== undefined) profile[field] = value;
  }
  return {
    ...user,
    profile,
    ...(body.blocked !== undefined && { blocked: body.blocked }),
    ...(body.user_metadata !== undefined && { user_metadata: mergeMetadata(user.user_metadata, body.user_metadata) }),
    ...(body.app_metadata !== undefined && { app_metadata: mergeMetadata(user.app_metadata, body.app_metadata) }),
  };
}

// ---- link_with ----

async function verifyIdToken(services: Services, request: FastifyRequest, token: string): Promise<string> {
  const tenant = request.tenant;
  try {
    const jwks = await services.keyRing.jwks(tenant.id);
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks as unknown as JSONWebKeySet), {
      issuer: tenant.issuers,
      // The secondary's ID token must have been issued to the client the primary's token was issued to.
      audience: request.principal.clientId,
      algorithms: ['RS256'],
      requiredClaims: ['sub', 'exp'],
    });
    return payload.sub!;
  } catch {
    throw new InvalidInput('body', 'link_with: not a valid, unexpired ID token of this tenant issued to the calling client');
  }
}

// ---- events ----

/** Linking and unlinking change the primary's identities: a `user.updated` for it, in the link's transaction. */
function primaryUpdatedEvent(request: FastifyRequest, primaryId: string, previousObject: Record<string, unknown>) {
  return async (trx: Kysely<Database>): Promise<void> => {
    const tenantId = request.tenant.id;
    const primary = await findUser(trx, tenantId, primaryId);
    if (!primary) throw new UserNotFound();
    const object = await userEventObject(trx, primary);
    await emitEvent(trx, { tenantId, type: 'user.updated', object, previousObject, context: eventContextFrom(request) });
  };
}

// ---- routes ----

export function registerUsers(api: App, services: Services): void {
  const db = services.store.db;

  async function findOr404(tenantId: string, userId: string): Promise<User> {
    const user = await findPrimaryUser(db, tenantId, userId);
    if (!user) throw new UserNotFound();
    return user;
  }

  api.get('/users', {
    ...operation(['read:users', 'read:user_idp_tokens'], {
      summary: 'List or search users',
      querystring: ListQuery,
      response: { 200: pagedList(Type.Partial(UserBody, { additionalProperties: true }), 'users') },
    }),
    handler: async (request) => {
      const { q, sort, connection, fields, include_fields, search_engine: _engine, primary_order: _order, ...paging } = request.query;
      const tenantId = request.tenant.id;
      const window = pageWindow(paging);
      const search = parseUserSearch(q);
      if (sort) {
        const [field, direction] = sort.split(':') as [string, string];
        if (!(USER_SORT_FIELDS as readonly string[]).includes(field)) {
          throw new InvalidInput('querystring', `sort: cannot sort by ${field}; fields: ${USER_SORT_FIELDS.join(', ')}`);
        }
        search.criteria.sort = { field: field as UserSortField, descending: direction === '-1' };
      }
      const context = await contextFor(services, tenantId);
      const connectionNames = [...search.connectionNames, ...(connection !== undefined ? [connection] : [])];
      if (connectionNames.length > 0) {
        // Every named connection must be the user's: with two different names nothing matches.
        const ids = [...context.connections.values()].filter((c) => connectionNames.every((n) => n === c.name)).map((c) => c.id);
        search.criteria.connectionIds = ids;
      }
      // Totals only when asked for; a checkpoint page reads one user past the page to know whether there is a next.
      const limit = window.checkpoint ? window.limit + 1 : window.limit;
      const found = await listUsers(db, tenantId, search.criteria, { offset: window.offset, limit }, { total: !window.checkpoint && paging.include_totals === true });
      const users = found.users.slice(0, window.limit);
      const total = window.checkpoint ? window.offset + found.users.length : found.total;
      const views = (await presentMany(services, tenantId, users, context)).map((v) => selectFields(v, fields, include_fields));
      return pageBody(window, paging, views, total, 'users');
    },
  });

  api.post('/users', {
    ...operation(['create:users'], {
      summary: 'Create a user',
      body: CreateUserBody,
      response: {
        201: UserBody,
        ...errorResponses('management', { 409: 'user_exists: a user with this email, phone number or username exists in the connection' }),
      },
    }),
    handler: async (request, reply) => {
      const body = request.body;
      const tenantId = request.tenant.id;
      const connection = await findConnectionByName(db, tenantId, body.connection);
      if (!connection) throw new InvalidInput('body', `The connection ${body.connection} does not exist`);
      const strategy = strategyOf(connection);
      if (body.user_metadata) checkMetadata(body.user_metadata, 'user_metadata');
      if (body.app_metadata) checkMetadata(body.app_metadata, 'app_metadata');

      if (strategy === 'auth0') {
        if (!body.email) throw new InvalidInput('body', 'email is required for a user of a database connection');
        if (!body.password) throw new InvalidInput('body', 'password is required for a user of a database connection');
        const requiresUsername = databaseOptions(connection).requires_username === true;
        if (requiresUsername && !body.username) throw new InvalidInput('body', 'username is required: the connection requires one');
        if (!requiresUsername && body.username !== undefined) {
          throw new InvalidInput('body', 'Cannot set username for a connection that does not require one (requires_username)');
        }
        if (body.username !== undefined) checkUsername(connection, body.username);
      } else {
        if (body.password !== undefined) throw new InvalidInput('body', 'Only users of database (auth0) connections have passwords');
        if (body.username !== undefined) throw new InvalidInput('body', `Users of ${strategy} connections have no username`);
        if (strategy === 'email' && !body.email) throw new InvalidInput('body', 'email is required for a user of an email connection');
        if (strategy === 'sms' && !body.phone_number) throw new InvalidInput('body', 'phone_number is required for a user of an sms connection');
      }

      const now = Date.now();
      const profile: UserProfile = {};
      for (const field of ['name', 'given_name', 'family_name', 'nickname', 'picture'] as const) {
        if (body[field] !== undefined) profile[field] = body[field];
      }
      const user = newUser(
        {
          user_id: body.user_id === undefined ? newUserId(PROVIDER_OF_STRATEGY[strategy]!) : `${PROVIDER_OF_STRATEGY[strategy]}|${body.user_id}`,
          tenant_id: tenantId,
          connection_id: connection.id,
          email: body.email === undefined ? null : normalizeEmail(body.email),
          email_verified: body.email_verified ?? false,
          username: body.username?.toLowerCase() ?? null,
          phone_number: body.phone_number ?? null,
          phone_verified: body.phone_verified ?? false,
          blocked: body.blocked ?? false,
          profile,
          user_metadata: body.user_metadata ?? {},
          app_metadata: body.app_metadata ?? {},
        },
        now,
      );
      if (body.password !== undefined) assertPasswordAccepted(connection, body.password, personalInfo(user, user));
      if ((await userIdExists(db, user.user_id)) || (await findUserInConnection(db, connection.id, user))) throw new UserExists();
      if (body.password !== undefined) user.password_hash = await hashPassword(body.password);
      try {
        await insertUserWith(db, user, async (trx) => {
          const object = await userEventObject(trx, user);
          await emitEvent(trx, { tenantId, type: 'user.created', object, context: eventContextFrom(request) });
          // Reference B.5: a verification email unless email_verified is true or verify_email is false.
          if (strategy === 'auth0' && body.verify_email !== false) await queueVerificationEmail(trx, services, request.tenant, user);
        });
      } catch (err) {
        if (await isDuplicate(services, user)) throw new UserExists();
        throw err;
      }
      return reply.code(201).send(await presentOne(services, tenantId, user));
    },
  });

  api.get('/users/:id', {
    ...operation(['read:users', 'read:current_user', 'read:user_idp_tokens'], {
      summary: 'Get a user',
      params: UserIdParams,
      querystring: Type.Object(FieldsQuery, { additionalProperties: false }),
      response: {
        200: asSent(Type.Partial(UserBody, { additionalProperties: true, description: 'The user, or with fields its selected fields' })),
        ...errorResponses('management', { 403: 'insufficient_scope: a user token may read its own user only', 404: 'inexistent_user' }),
      },
    }),
    handler: async (request) => {
      assertActsOnSelf(request, request.params.id);
      const user = await findOr404(request.tenant.id, request.params.id);
      const view = await presentOne(services, request.tenant.id, user);
      // The upstream's tokens of federated identities: for read:user_idp_tokens only.
      const shown = request.principal.scopes.has('read:user_idp_tokens') ? await withUpstreamTokens(services, view) : view;
      return selectFields(shown, request.query.fields, request.query.include_fields);
    },
  });

  api.patch('/users/:id', {
    ...operation(
      ['update:users', 'update:users_app_metadata', 'update:current_user_metadata', 'create:current_user_metadata', 'delete:current_user_metadata'],
      {
        summary: 'Update a user',
        params: UserIdParams,
        body: UpdateUserBody,
        response: {
          200: UserBody,
          ...errorResponses('management', {
            403: 'insufficient_scope: a user token may act on its own user only, and change user_metadata only',
            404: 'inexistent_user',
            409: concurrentChangeConflict('user_exists: the new email, phone number or username is taken in the connection'),
          }),
        },
      },
    ),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      assertActsOnSelf(request, request.params.id);
      const body = request.body;
      const context = await contextFor(services, tenantId);
      // Read, merge, conditional write; again from the read when another request changed the user meanwhile, so
      // that two PATCHes merging different metadata keys both land (store/concurrent-change.ts).
      const user = await retryOnConcurrentChange('user', async () => {
        const user = await findOr404(tenantId, request.params.id);
        assertMayPatch(request, user, body);
        if (body.user_metadata) checkMetadata(body.user_metadata, 'user_metadata');
        if (body.app_metadata) checkMetadata(body.app_metadata, 'app_metadata');
        const secondaries = (await listLinkedIdentities(db, tenantId, [user.user_id])).get(user.user_id) ?? [];
        let target = user;
        if (body.connection !== undefined) {
          const found = [user, ...secondaries].find((i) => context.connections.get(i.connection_id)?.name === body.connection);
          if (!found) throw new InvalidInput('body', `The user has no identity in the connection ${body.connection}`);
          target = found;
        }
        const now = Date.now();
        const primary = patchRoot(user, body);
        const touchesIdentity = IDENTITY_FIELDS.some((f) => body[f] !== undefined);
        let identity = target.user_id === user.user_id ? primary : target;
        if (touchesIdentity) {
          identity = await patchIdentity(identity, primary, context.connections.get(target.connection_id)!, body, now);
        }
        const changes = identity.user_id === primary.user_id ? [{ before: user, after: identity }] : [{ before: user, after: primary }, { before: target, after: identity }];
        const duplicateCheck = {
          email: identity.email !== target.email ? identity.email : null,
          username: identity.username !== target.username ? identity.username : null,
          phone_number: identity.phone_number !== target.phone_number ? identity.phone_number : null,
        };
        if (await findUserInConnection(db, identity.connection_id, duplicateCheck, identity.user_id)) throw new UserExists();
        const previousObject = await userEventObject(db, user);
        try {
          await updateUsersAsRead(db, changes, now, async (trx) => {
            const updated = await findUser(trx, tenantId, user.user_id);
            if (!updated) throw new UserNotFound();
            const object = await userEventObject(trx, updated);
            await emitEvent(trx, { tenantId, type: 'user.updated', object, previousObject, context: eventContextFrom(request) });
          });
        } catch (err) {
          if (!(err instanceof ConcurrentChange) && (await findUserInConnection(db, identity.connection_id, duplicateCheck, identity.user_id))) throw new UserExists();
          throw err;
        }
        return user;
      });
      // A block ends the user's sessions now (not at their next request), telling the clients that took part.
      if (body.blocked === true && !user.blocked) await endSessionsOfUsers(services, request.tenant, [user.user_id], 'account-deactivated');
      return presentOne(services, tenantId, await findOr404(tenantId, user.user_id), context);
    },
  });

  api.delete('/users/:id', {
    ...operation(['delete:users', 'delete:current_user'], {
      summary: 'Delete a user',
      params: UserIdParams,
      response: {
        204: noContent('Deleted, or not there'),
        ...errorResponses('management', { 403: 'insufficient_scope: a user token may delete its own user only' }),
      },
    }),
    handler: async (request, reply) => {
      assertActsOnSelf(request, request.params.id);
      // A linked secondary is no user of its own, and a user already gone is as good as deleted: 204 either way.
      const tenantId = request.tenant.id;
      const user = await findPrimaryUser(db, tenantId, request.params.id);
      if (user) {
        // The deletion takes the sessions with it; their clients are told first (back-channel logout).
        await endSessionsOfUsers(services, request.tenant, [user.user_id], 'account-deleted');
        await deleteUser(db, tenantId, user.user_id, async (trx) => {
          const object = await deletedUserEventObject(trx, user);
          await emitEvent(trx, { tenantId, type: 'user.deleted', object, context: eventContextFrom(request) });
          // `du` commits with the deletion (tenant logs, logs/writer.ts).
          const by = { client_id: request.principal.clientId };
          await services.tenantLogs.writeWith(trx, () => [logRow(tenantId, { type: 'du', user_id: user.user_id, user_name: user.email ?? user.username ?? undefined, client: by }, requestOrigin(request))]);
        });
      }
      return reply.code(204).send();
    },
  });

  api.get('/users-by-email', {
    ...operation(['read:users'], {
      summary: 'Find users by email',
      querystring: Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }), ...FieldsQuery }, { additionalProperties: false }),
      response: { 200: asSent(Type.Array(Type.Partial(UserBody, { additionalProperties: true }))) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const users = await findUsersByEmail(db, tenantId, request.query.email);
      const views = await presentMany(services, tenantId, users, await contextFor(services, tenantId));
      return views.map((v) => selectFields(v, request.query.fields, request.query.include_fields));
    },
  });

  api.post('/users/:id/identities', {
    ...operation(['update:users', 'update:current_user_identities'], {
      summary: 'Link a user account to this (primary) user',
      params: UserIdParams,
      body: LinkBody,
      response: {
        201: Type.Array(Identity),
        ...errorResponses('management', {
          403: "insufficient_scope: linking by provider and user_id needs update:users; link_with needs the primary user's own token",
          404: 'inexistent_user: the user or the user to link',
          409: 'identity_conflict: the identity is already linked',
        }),
      },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      const { principal } = request;
      assertActsOnSelf(request, request.params.id);
      const primary = await findOr404(tenantId, request.params.id);
      const body = request.body;
      let secondaryId: string;
      if (body.link_with !== undefined) {
        if (body.provider !== undefined || body.user_id !== undefined || body.connection_id !== undefined) {
          throw new InvalidInput('body', 'When link_with is sent, provider, user_id and connection_id must not be');
        }
        if (!principal.isUser || principal.subject !== primary.user_id) {
          throw new NotAllowedForToken("link_with needs the primary user's own token (scope update:current_user_identities)");
        }
        secondaryId = await verifyIdToken(services, request, body.link_with);
      } else {
        if (body.provider === undefined || body.user_id === undefined) {
          throw new InvalidInput('body', 'Send either link_with, or provider and user_id (with connection_id optionally)');
        }
        if (principal.selfOnly) {
          throw new NotAllowedForToken("Linking by provider and user_id needs update:users; a user's own token must send link_with");
        }
        secondaryId = `${body.provider}|${body.user_id}`;
      }
      const secondary = await findUser(db, tenantId, secondaryId);
      if (!secondary || (body.connection_id !== undefined && secondary.connection_id !== body.connection_id)) {
        throw new UserNotFound('The user to link does not exist.');
      }
      if (secondary.user_id === primary.user_id) throw new InvalidInput('body', 'A user cannot be linked to itself');
      if (secondary.linked_to !== null) throw new IdentityConflict('The identity is already linked to a user');
      if ((await listLinkedIdentities(db, tenantId, [secondary.user_id])).size > 0) {
        throw new InvalidInput('body', 'The user to link has identities linked to it; unlink them first');
      }
      const previousObject = await userEventObject(db, primary);
      const linkedEvent = primaryUpdatedEvent(request, primary.user_id, previousObject);
      if (!(await linkUser(db, tenantId, primary.user_id, secondary.user_id, Date.now(), linkedEvent))) {
        throw new IdentityConflict('The identity is already linked to a user');
      }
      const context = await contextFor(services, tenantId);
      const linked = (await listLinkedIdentities(db, tenantId, [primary.user_id])).get(primary.user_id) ?? [];
      return reply.code(201).send(presentIdentities(primary, linked, context));
    },
  });

  api.delete('/users/:id/identities/:provider/:user_id', {
    ...operation(['update:users', 'update:current_user_identities'], {
      summary: 'Unlink an identity from a user',
      params: IdentityParams,
      response: {
        200: Type.Array(Identity),
        ...errorResponses('management', {
          403: 'insufficient_scope: a user token may unlink from its own user only',
          404: 'inexistent_user or inexistent_identity',
        }),
      },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      assertActsOnSelf(request, request.params.id);
      const primary = await findOr404(tenantId, request.params.id);
      const secondaryId = `${request.params.provider}|${request.params.user_id}`;
      if (secondaryId === primary.user_id) throw new InvalidInput('params', 'The main identity of a user cannot be unlinked');
      const previousObject = await userEventObject(db, primary);
      const unlinkedEvent = primaryUpdatedEvent(request, primary.user_id, previousObject);
      if (!(await unlinkUser(db, tenantId, primary.user_id, secondaryId, Date.now(), unlinkedEvent))) throw new IdentityNotFound();
      const context = await contextFor(services, tenantId);
      const linked = (await listLinkedIdentities(db, tenantId, [primary.user_id])).get(primary.user_id) ?? [];
      return presentIdentities(primary, linked, context);
    },
  });
}

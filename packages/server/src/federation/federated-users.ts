/**
 * The local user of an upstream identity: found by (connection, upstream subject), so the second login is the
 * same user; created on the first login (`user.created`), its profile refreshed from the upstream at every
 * login (`user.updated` when something changed). The upstream's tokens are kept sealed.
 */
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { randomAlphanumeric } from '../crypto/ids.js';
import type { Sealer } from '../crypto/sealing.js';
import { eventContextFrom } from '../events/context.js';
import { emitEvent } from '../events/outbox.js';
import { userEventObject } from '../management/event-objects.js';
import type { Services } from '../services.js';
import type { Connection } from '../store/connections.js';
import { findFederatedIdentity, insertFederatedIdentity, updateFederatedTokens } from '../store/federated-identities.js';
import { saveSamlUpstreamSession } from '../store/saml-upstream-logout.js';
import type { Database } from '../store/schema.js';
import { findUser, insertUserWith, newUser, recordLogin, updateUsers, userIdExists, type User, type UserProfile } from '../store/users.js';
import type { FederatedProfile, FederationStrategy } from './strategy.js';
import { UpstreamError } from './upstream-error.js';

const tokenContext = (userId: string, name: string) => `federated_token:${userId}:${name}`;

function sealedTokens(sealer: Sealer, userId: string, tokens: FederatedProfile['tokens']) {
  return {
    access_token_sealed: tokens.access_token ? sealer.seal(tokens.access_token, tokenContext(userId, 'access_token')) : null,
    refresh_token_sealed: tokens.refresh_token ? sealer.seal(tokens.refresh_token, tokenContext(userId, 'refresh_token')) : null,
    id_token_sealed: tokens.id_token ? sealer.seal(tokens.id_token, tokenContext(userId, 'id_token')) : null,
  };
}

/** The federated identity of a user with its upstream ID token, opened (for a federated logout). */
export async function federatedIdentityOf(db: Kysely<Database>, sealer: Sealer, userId: string): Promise<{ connectionId: string; idToken: string | undefined } | undefined> {
  const row = await db.selectFrom('federated_identities').selectAll().where('user_id', '=', userId).executeTakeFirst();
  if (!row) return undefined;
  return { connectionId: row.connection_id, idToken: row.id_token_sealed ? sealer.unseal(row.id_token_sealed, tokenContext(userId, 'id_token')) : undefined };
}

/** The upstream's tokens of a federated user, opened (for `read:user_idp_tokens` holders). */
export async function upstreamTokens(db: Kysely<Database>, sealer: Sealer, userId: string): Promise<FederatedProfile['tokens'] | undefined> {
  const row = await db.selectFrom('federated_identities').selectAll().where('user_id', '=', userId).executeTakeFirst();
  if (!row) return undefined;
  return {
    ...(row.access_token_sealed && { access_token: sealer.unseal(row.access_token_sealed, tokenContext(userId, 'access_token')) }),
    ...(row.refresh_token_sealed && { refresh_token: sealer.unseal(row.refresh_token_sealed, tokenContext(userId, 'refresh_token')) }),
  };
}

/** The user's fields from the upstream's profile; what it sends only once is taken from `stored` when it is absent now. */
function profileFields(profile: FederatedProfile, stored?: UserProfile): Pick<User, 'email' | 'email_verified'> & { profile: UserProfile } {
  const fields: UserProfile = {};
  const once = new Set<string>(profile.sentOnce ?? []);
  for (const name of ['name', 'given_name', 'family_name', 'nickname', 'picture'] as const) {
    const value = profile[name] ?? (once.has(name) ? stored?.[name] : undefined);
    if (value !== undefined) fields[name] = value;
  }
  return { email: profile.email ?? null, email_verified: profile.email_verified ?? false, profile: fields };
}

function sameProfile(user: User, next: ReturnType<typeof profileFields>): boolean {
  return (
    (user.email ?? null) === (next.email?.toLowerCase() ?? null) &&
    user.email_verified === next.email_verified &&
    JSON.stringify(user.profile) === JSON.stringify(next.profile)
  );
}

/** A SAML sign-in's NameID and SessionIndex, for the LogoutRequest of a later federated logout. */
async function rememberSamlSession(db: Kysely<Database>, tenantId: string, connection: Connection, userId: string, profile: FederatedProfile, now: number): Promise<void> {
  const session = profile.samlSession;
  if (!session) return;
  await saveSamlUpstreamSession(db, {
    user_id: userId,
    tenant_id: tenantId,
    connection_id: connection.id,
    name_id: session.nameId,
    name_id_format: session.nameIdFormat ?? null,
    session_index: session.sessionIndex ?? null,
    updated_at: now,
  });
}

/** The reference's id when no user of any tenant has it; otherwise the same with a suffix (ids are unique across tenants). */
async function freeUserId(db: Kysely<Database>, preferred: string): Promise<string> {
  return (await userIdExists(db, preferred)) ? `${preferred}.${randomAlphanumeric(8)}` : preferred;
}

export async function signInFederatedUser(
  services: Services,
  request: FastifyRequest,
  connection: Connection,
  strategy: FederationStrategy,
  profile: FederatedProfile,
  now = Date.now(),
): Promise<User> {
  const db = services.store.db;
  const tenantId = request.tenant.id;
  const fields = profileFields(profile);
  const known = await findFederatedIdentity(db, connection.id, profile.subject);
  if (known) {
    const user = (await findUser(db, tenantId, known.user_id))!;
    if (profile.sentOnce) fields.profile = profileFields(profile, user.profile).profile;
    if (!sameProfile(user, fields)) {
      const previousObject = await userEventObject(db, user);
      const next: User = { ...user, ...fields };
      await updateUsers(db, [next], now, async (trx) => {
        await emitEvent(trx, { tenantId, type: 'user.updated', object: await userEventObject(trx, next), previousObject, context: eventContextFrom(request) });
      });
    }
    await updateFederatedTokens(db, user.user_id, { ...sealedTokens(services.sealer, user.user_id, profile.tokens), updated_at: now });
    await recordLogin(db, tenantId, user.user_id, request.ip, now);
    await rememberSamlSession(db, tenantId, connection, user.user_id, profile, now);
    return (await findUser(db, tenantId, user.user_id))!;
  }

  const user = newUser({ user_id: await freeUserId(db, strategy.userIdOf(connection, profile.subject)), tenant_id: tenantId, connection_id: connection.id, ...fields }, now);
  try {
    await insertUserWith(db, user, async (trx) => {
      await insertFederatedIdentity(trx, {
        user_id: user.user_id,
        tenant_id: tenantId,
        connection_id: connection.id,
        subject: profile.subject,
        ...sealedTokens(services.sealer, user.user_id, profile.tokens),
        updated_at: now,
      });
      await emitEvent(trx, { tenantId, type: 'user.created', object: await userEventObject(trx, user), context: eventContextFrom(request) });
    });
  } catch (error) {
    // Two first logins racing: the other one created the user.
    if (await findFederatedIdentity(db, connection.id, profile.subject)) return signInFederatedUser(services, request, connection, strategy, profile, now);
    if (fields.email) throw new UpstreamError('access_denied', 'Another user of this connection already has this email address');
    throw error;
  }
  await recordLogin(db, tenantId, user.user_id, request.ip, now);
  await rememberSamlSession(db, tenantId, connection, user.user_id, profile, now);
  return (await findUser(db, tenantId, user.user_id))!;
}

/**
 * How a user looks on the Management API (B.5): the reference's user object, with its identities (a linked
 * secondary shown with its profileData), the default picture, name and nickname derived as the reference
 * derives them, and `fields`/`include_fields` selection. Shared with event objects and user jobs.
 */
import { createHash } from 'node:crypto';
import { Type, type Static } from '@fastify/type-provider-typebox';
import type { Services } from '../services.js';
import { listConnections, type Connection } from '../store/connections.js';
import { displayName, displayNickname } from '../store/user-names.js';
import { listLinkedIdentities, type User } from '../store/users.js';
import { federationStrategy } from '../federation/strategies.js';

export const Identity = Type.Object(
  { connection: Type.String(), user_id: Type.String(), provider: Type.String(), isSocial: Type.Boolean() },
  { additionalProperties: true },
);
export const UserBody = Type.Object(
  { user_id: Type.String(), identities: Type.Array(Identity), created_at: Type.String(), updated_at: Type.String() },
  { additionalProperties: true },
);
export type IdentityView = Static<typeof Identity> & Record<string, unknown>;
export type UserView = Static<typeof UserBody> & Record<string, unknown>;

export const PROVIDER_OF_STRATEGY: Record<string, string> = { auth0: 'auth0', email: 'email', sms: 'sms' };

function splitUserId(userId: string): { provider: string; id: string } {
  const bar = userId.indexOf('|');
  return { provider: userId.slice(0, bar), id: userId.slice(bar + 1) };
}

function iso(ms: number | null): string | undefined {
  return ms === null ? undefined : new Date(ms).toISOString();
}

/** A generic avatar derived from the email (or the id when there is none), as the reference's users carry. */
function defaultPicture(user: User): string {
  const seed = (user.email ?? user.user_id).trim().toLowerCase();
  return `https://www.gravatar.com/avatar/${createHash('md5').update(seed).digest('hex')}?s=480&r=pg&d=identicon`;
}

/** Fields the identity itself holds, shown on a linked secondary identity. */
function profileData(user: User): Record<string, unknown> {
  return {
    ...(user.email !== null && { email: user.email, email_verified: user.email_verified }),
    ...(user.username !== null && { username: user.username }),
    ...(user.phone_number !== null && { phone_number: user.phone_number, phone_verified: user.phone_verified }),
    ...user.profile,
  };
}

export interface Context {
  connections: Map<string, Connection>;
}

function identityOf(user: User, context: Context, secondary: boolean): IdentityView {
  const { provider, id } = splitUserId(user.user_id);
  const connection = context.connections.get(user.connection_id);
  return {
    connection: connection?.name ?? '',
    user_id: id,
    provider,
    isSocial: connection ? (federationStrategy(connection.strategy)?.isSocial ?? false) : false,
    ...(secondary && { profileData: profileData(user) }),
  };
}

export function presentIdentities(user: User, secondaries: readonly User[], context: Context): IdentityView[] {
  return [identityOf(user, context, false), ...secondaries.map((s) => identityOf(s, context, true))];
}

export function presentUser(user: User, secondaries: readonly User[], context: Context): UserView {
  const { profile } = user;
  return {
    user_id: user.user_id,
    ...(user.email !== null && { email: user.email, email_verified: user.email_verified }),
    ...(user.username !== null && { username: user.username }),
    ...(user.phone_number !== null && { phone_number: user.phone_number, phone_verified: user.phone_verified }),
    created_at: iso(user.created_at)!,
    updated_at: iso(user.updated_at)!,
    identities: presentIdentities(user, secondaries, context),
    app_metadata: user.app_metadata,
    user_metadata: user.user_metadata,
    picture: profile.picture ?? defaultPicture(user),
    name: displayName(user),
    nickname: displayNickname(user),
    ...(profile.given_name !== undefined && { given_name: profile.given_name }),
    ...(profile.family_name !== undefined && { family_name: profile.family_name }),
    ...(user.last_ip !== null && { last_ip: user.last_ip }),
    ...(user.last_login !== null && { last_login: iso(user.last_login) }),
    ...(user.last_password_reset !== null && { last_password_reset: iso(user.last_password_reset) }),
    logins_count: user.logins_count,
    blocked: user.blocked,
  };
}

/** `fields` (comma-separated) with `include_fields` (default true): keep only, or drop, those fields. */
export function selectFields<T extends object>(view: T, fields: string | undefined, includeFields: boolean | undefined): T | Record<string, unknown> {
  if (fields === undefined || fields.trim() === '') return view;
  const named = new Set(
    fields
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean),
  );
  const include = includeFields !== false;
  return Object.fromEntries(Object.entries(view).filter(([key]) => named.has(key) === include));
}

export async function contextFor(services: Services, tenantId: string): Promise<Context> {
  const connections = await listConnections(services.store.db, tenantId);
  return { connections: new Map(connections.map((c) => [c.id, c])) };
}

export async function presentMany(services: Services, tenantId: string, users: readonly User[], context: Context): Promise<UserView[]> {
  const linked = await listLinkedIdentities(
    services.store.db,
    tenantId,
    users.map((u) => u.user_id),
  );
  return users.map((u) => presentUser(u, linked.get(u.user_id) ?? [], context));
}

export async function presentOne(services: Services, tenantId: string, user: User, context?: Context): Promise<UserView> {
  const [view] = await presentMany(services, tenantId, [user], context ?? (await contextFor(services, tenantId)));
  return view!;
}

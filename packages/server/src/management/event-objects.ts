/**
 * `data.object` of each event type (reference A.9), built in one place so that every path that changes a user,
 * an organization or a group (the Management API, hosted signup, passwordless first login) raises the same shape.
 * Functions that read take the Kysely of the change's transaction: on SQLite a read through another handle
 * would wait for the transaction to end.
 */
import type { Kysely } from 'kysely';
import { listConnections } from '../store/connections.js';
import type { Group } from '../store/groups.js';
import type { Organization, OrganizationConnection } from '../store/organizations.js';
import type { Database } from '../store/schema.js';
import { listLinkedIdentities, type User } from '../store/users.js';
import { presentUser } from './user-view.js';

type EventObject = Record<string, unknown>;

const iso = (ms: number) => new Date(ms).toISOString();

/** The user profile as the Management API shows it (user_id, identities, created_at, updated_at, …). */
export async function userEventObject(db: Kysely<Database>, user: User): Promise<EventObject> {
  const connections = await listConnections(db, user.tenant_id);
  const linked = await listLinkedIdentities(db, user.tenant_id, [user.user_id]);
  return presentUser(user, linked.get(user.user_id) ?? [], { connections: new Map(connections.map((c) => [c.id, c])) });
}

/** `user.deleted`: the profile as it was, with the time it went. */
export async function deletedUserEventObject(db: Kysely<Database>, user: User, now = Date.now()): Promise<EventObject> {
  return { ...(await userEventObject(db, user)), deleted_at: iso(now) };
}

/** What organization member events carry of a user. */
export function memberUserObject(user: { user_id: string; email: string | null; name?: string; picture?: string }): EventObject {
  return {
    user_id: user.user_id,
    ...(user.email !== null && { email: user.email }),
    ...(user.name !== undefined && { name: user.name }),
    ...(user.picture !== undefined && { picture: user.picture }),
  };
}

/** `organization.created` / `.updated`: `{ id, name, display_name?, metadata, branding? }`. */
export function organizationEventObject(organization: Organization): EventObject {
  return {
    id: organization.id,
    name: organization.name,
    ...(organization.display_name !== null && { display_name: organization.display_name }),
    metadata: organization.metadata,
    ...(organization.branding !== null && { branding: organization.branding }),
  };
}

/** `organization.deleted`: `{ id, name, display_name?, metadata }`. */
export function deletedOrganizationEventObject(organization: Organization): EventObject {
  const { branding: _branding, ...rest } = organizationEventObject(organization);
  return rest;
}

export function organizationRef(organization: Organization): EventObject {
  return { id: organization.id, name: organization.name };
}

/** `organization.connection.added` / `.updated`. */
export function organizationConnectionEventObject(organization: Organization, connection: OrganizationConnection): EventObject {
  return {
    organization: organizationRef(organization),
    connection: { id: connection.connection_id },
    assign_membership_on_login: connection.assign_membership_on_login,
    show_as_button: connection.show_as_button,
    is_signup_enabled: connection.is_signup_enabled,
    is_enabled: connection.is_enabled,
    ...(connection.organization_access_level !== null && { organization_access_level: connection.organization_access_level }),
  };
}

/** The group reference inside member and role events: `{ id, external_id?, type, connection_id | organization_id }`. */
export function groupRef(group: Group): EventObject {
  return {
    id: group.id,
    ...(group.external_id !== null && { external_id: group.external_id }),
    type: group.type,
    ...(group.type === 'connection' && group.connection_id !== null && { connection_id: group.connection_id }),
    ...(group.type === 'organization' && group.organization_id !== null && { organization_id: group.organization_id }),
  };
}

/** `group.created` (and, with `updated_at`, `group.updated` / `group.deleted`). */
export function groupEventObject(group: Group, options: { withUpdatedAt?: boolean } = {}): EventObject {
  const { id, ...ref } = groupRef(group);
  return {
    id,
    name: group.name,
    ...ref,
    created_at: iso(group.created_at),
    ...(options.withUpdatedAt && { updated_at: iso(group.updated_at) }),
  };
}

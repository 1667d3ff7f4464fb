/**
 * Library rule 4: a session from a social connection in development-keys mode never answers silently
 * (`prompt=none`, checkSession): `login_required` even while it lives, since the keys are the server's, shared
 * by every tenant, not the application owner's.
 */
import type { Services } from '../services.js';
import { findConnectionById, type Connection } from '../store/connections.js';
import type { User } from '../store/users.js';
import { federationStrategy } from './strategies.js';

export function usesDevelopmentKeys(connection: Connection): boolean {
  return federationStrategy(connection.strategy)?.usesDevelopmentKeys?.(connection.options) ?? false;
}

export async function signedInWithDevelopmentKeys(services: Services, tenantId: string, user: User): Promise<boolean> {
  const connection = await findConnectionById(services.store.db, tenantId, user.connection_id);
  return connection !== undefined && usesDevelopmentKeys(connection);
}

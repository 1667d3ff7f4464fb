/**
 * Every migration, in order. Listed statically (not read from a folder) so they ship inside the build
 * and run the same from source and from dist. Never edit a migration that has shipped; add the next one.
 */
import type { Migration, MigrationProvider } from 'kysely';
import * as foundation from './0001_foundation.js';
import * as machineAccessAndUsers from './0002_machine_access_and_users.js';
import * as clients from './0003_clients.js';

const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_machine_access_and_users': machineAccessAndUsers,
  '0003_clients': clients,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};

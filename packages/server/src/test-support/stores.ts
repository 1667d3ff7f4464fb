/** Stores for tests that talk to the store itself, without a server. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore, type Store } from '../store/db.js';
import { freshPostgresSchema, postgresAvailable } from './services.js';

export type StoreOnDialect = [name: 'SQLite' | 'PostgreSQL', open: () => Promise<Store>, dispose: () => Promise<void>];

/**
 * One database on each dialect there is, for describe.each: SQLite in a temporary folder, and PostgreSQL in a
 * fresh schema when it is reachable. `open` may be called more than once (several nodes on one database).
 */
export async function storesOnEachDialect(folderPrefix: string): Promise<StoreOnDialect[]> {
  const sqliteDir = mkdtempSync(path.join(os.tmpdir(), folderPrefix));
  const stores: StoreOnDialect[] = [
    ['SQLite', () => openStore(`sqlite:${path.join(sqliteDir, 'test.sqlite')}`), async () => rmSync(sqliteDir, { recursive: true, force: true })],
  ];
  if (await postgresAvailable()) {
    const schema = freshPostgresSchema();
    stores.push(['PostgreSQL', () => openStore(schema.url), schema.drop]);
  }
  return stores;
}

/**
 * Opens the database named by DATABASE_URL: embedded SQLite (better-sqlite3, WAL) by default, PostgreSQL for
 * `postgres://…`. The repositories are written once against Kysely and run unchanged on both.
 *
 * A `postgres://` URL may carry `?schema=NAME`: every connection then uses that schema (created if missing).
 * Tests use it to get a fresh, isolated schema per run; deployments can use it to share one database.
 */
import { existsSync } from 'node:fs';
import { ensurePrivateDir, ensurePrivateSqliteFiles } from '../data-dir.js';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type LogEvent } from 'kysely';
import pg from 'pg';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The PostgreSQL schema named by `?schema=`, if any. */
  schema?: string;
  /** A cheap round trip, for /readyz. */
  ping(): Promise<void>;
  /** PostgreSQL: the connection pool's counts, for /metrics (SQLite has no pool). */
  poolStats?(): { total: number; idle: number; waiting: number; max: number };
  close(): Promise<void>;
}

const PG_INT8 = 20;

/** Sees every query the store runs, as sent (tests check their plans: store/query-plans.test.ts). */
export type QueryObserver = (query: { sql: string; parameters: readonly unknown[] }) => void;

function observing(onQuery: QueryObserver | undefined): { log?: (event: LogEvent) => void } {
  return onQuery ? { log: (event) => onQuery(event.query) } : {};
}

/** Distinct SQL texts kept prepared; the queries of a running server are far fewer. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew, and on the hot paths (token, userinfo, authorize) SQLite's parse and plan
 * cost more than the lookup itself. Prepared statements are reusable in better-sqlite3 (and recompiled by
 * SQLite after a schema change), and Kysely runs one query at a time on this connection, so each SQL text is
 * prepared once and kept, least recently used first out.
 */
function withStatementCache(database: SQLite.Database): { prepare: SQLite.Database['prepare']; close: () => void } {
  const statements = new Map<string, SQLite.Statement>();
  return {
    prepare: ((source: string) => {
      let statement = statements.get(source);
      if (statement) {
        statements.delete(source);
      } else {
        statement = database.prepare(source);
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
      }
      statements.set(source, statement);
      return statement;
    }) as SQLite.Database['prepare'],
    close: () => {
      statements.clear();
      database.close();
    },
  };
}

export interface StoreOptions {
  /** SQLite only: `normal` (the default) or `full` (see Config.sqliteSynchronous). */
  sqliteSynchronous?: 'normal' | 'full';
  /** Sees every query the store runs (query-plan tests). */
  onQuery?: QueryObserver;
}

function openSqlite(file: string, options: StoreOptions): Store {
  if (file !== ':memory:') {
    const dir = path.dirname(path.resolve(file));
    if (!existsSync(dir)) ensurePrivateDir(dir);
    ensurePrivateSqliteFiles(file);
  }
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  database.pragma('foreign_keys = ON');
  // Several processes (GATEHOUSE_WORKERS, the CLI) may write the same file: wait for a lock instead of failing.
  database.pragma('busy_timeout = 5000');
  // WAL with NORMAL: a commit is durable once the OS has it (a killed process loses nothing; a power loss may
  // lose the last commits, never corrupt the file). FULL syncs the WAL on every commit: durable against power loss.
  database.pragma(`synchronous = ${options.sqliteSynchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }), ...observing(options.onQuery) });
  return {
    db,
    dialect: 'sqlite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

function quoteIdentifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid PostgreSQL schema name: ${name}`);
  return `"${name}"`;
}

/** Splits our `?schema=` parameter off a PostgreSQL URL; pg itself does not know it. */
export function parsePostgresUrl(url: string): { connectionString: string; schema: string | undefined } {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  return { connectionString: parsed.toString(), schema };
}

function openPostgres(connectionString: string, schema: string | undefined, onQuery?: QueryObserver): Store {
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    // Times are epoch milliseconds in bigint columns; they fit a JS number, so read them as one.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  const searchPath = schema ? `SET search_path TO ${quoteIdentifier(schema)}` : undefined;
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool,
      onCreateConnection: searchPath
        ? async (connection) => {
            await connection.executeQuery(sql.raw(searchPath).compile(db));
          }
        : undefined,
    }),
    ...observing(onQuery),
  });
  return {
    db,
    dialect: 'postgres',
    ...(schema && { schema }),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max }),
    close: () => db.destroy(),
  };
}

/** Opens the store; does not migrate (see migrateToLatest). */
export async function openStore(databaseUrl: string, options: StoreOptions = {}): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) return openSqlite(databaseUrl.slice('sqlite:'.length), options);
  const { connectionString, schema } = parsePostgresUrl(databaseUrl);
  if (schema) {
    // Without the schema, the search_path set on each connection points at nothing; create it first.
    const admin = new pg.Client({ connectionString });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
    } finally {
      await admin.end();
    }
  }
  return openPostgres(connectionString, schema, options.onQuery);
}

export interface MigrationReport {
  applied: string[];
}

/** Applies every pending migration; throws with the failing migration's name. */
export async function migrateToLatest(store: Store): Promise<MigrationReport> {
  // Kysely looks for its migration tables across every schema unless told which one; with several schemas in
  // one database (tests, shared deployments) it would find another schema's lock table and skip creating its own.
  const migrator = new Migrator({
    db: store.db,
    provider: migrationProvider,
    ...(store.schema && { migrationTableSchema: store.schema }),
  });
  const { error, results } = await migrator.migrateToLatest();
  const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { applied };
}

/** Describes a database URL for logs without its password. */
export function describeDatabase(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) return `SQLite ${databaseUrl.slice('sqlite:'.length)}`;
  const url = new URL(databaseUrl);
  if (url.password) url.password = '***';
  return `PostgreSQL ${url.toString()}`;
}

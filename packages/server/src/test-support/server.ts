/**
 * Boots the real server on a free port with a fresh data dir (SQLite) or a fresh PostgreSQL schema, and
 * returns its public URL and admin credentials. Every request the tests make goes over real HTTP.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { loadConfig, type Config } from '../config.js';
import { signClientToken } from '../crypto/jwt.js';
import { MANAGEMENT_SCOPES } from '../management/scopes.js';
import { prepare, startServer, type RunningServer, type StartOptions } from '../server.js';
import type { QueryObserver } from '../store/db.js';
import type { App } from '../services.js';
import { ADMIN_CREDENTIALS_FILE } from '../tenancy/bootstrap.js';
import { freePort, freshPostgresSchema } from './services.js';

export interface TestServer {
  /** The default tenant's base URL, e.g. http://localhost:41234 (no trailing slash). */
  url: string;
  issuer: string;
  dataDir: string;
  databaseUrl: string;
  admin: { client_id: string; client_secret: string };
  server: RunningServer;
  /** Stops the server; keeps data dir and database, so `restart()` can prove persistence. */
  stop(): Promise<void>;
  /** Starts again on the same port, data dir and database. */
  restart(): Promise<TestServer>;
  /** Stops and removes the data dir and the PostgreSQL schema. */
  close(): Promise<void>;
}

export interface TestServerOptions {
  dialect?: 'sqlite' | 'postgres';
  /** Extra environment, as the CLI would read it. */
  env?: Record<string, string>;
  configure?: (app: App) => void;
  /** The server's log, as JSON lines (at GATEHOUSE_LOG_LEVEL, which `env` may set). */
  logStream?: Writable;
  /** Sees every query the server's store runs (query-plan tests). */
  onQuery?: QueryObserver;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-test-'));
  const postgres = options.dialect === 'postgres' ? freshPostgresSchema() : undefined;
  const port = await freePort();
  const config = loadConfig(
    { GATEHOUSE_LOG_LEVEL: 'silent', ...options.env },
    { port, host: '127.0.0.1', dataDir, ...(postgres && { databaseUrl: postgres.url }) },
  );
  const cleanup = async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await postgres?.drop();
  };
  return boot(config, options, cleanup);
}

async function boot(config: Config, options: TestServerOptions, cleanup: () => Promise<void>): Promise<TestServer> {
  const startOptions: StartOptions = {
    log: false,
    ...(options.configure && { configure: options.configure }),
    ...(options.logStream && { logStream: options.logStream }),
    ...(options.onQuery && { prepared: await prepare(config, { onQuery: options.onQuery }) }),
  };
  const server = await startServer(config, startOptions);
  const file = path.join(config.dataDir, ADMIN_CREDENTIALS_FILE);
  const admin = JSON.parse(readFileSync(file, 'utf8')) as { client_id: string; client_secret: string };
  const url = config.publicUrl;
  const self: TestServer = {
    url,
    issuer: `${url}/`,
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    admin: { client_id: admin.client_id, client_secret: admin.client_secret },
    server,
    stop: () => server.close(),
    restart: async () => {
      await server.close();
      return boot(config, options, cleanup);
    },
    close: async () => {
      await server.close();
      await cleanup();
    },
  };
  return self;
}

/**
 * A Management API access token for the admin client with every scope (or those given), signed exactly as the
 * token endpoint signs it. Minted directly so that tests can ask for any narrow set of scopes in one call;
 * the compat suites get theirs from the real token endpoint.
 */
export async function managementToken(test: TestServer, scopes: readonly string[] = MANAGEMENT_SCOPES): Promise<string> {
  const { tenant, managementAudience } = test.server.prepared.bootstrap!;
  return signClientToken(test.server.prepared.keyRing, tenant, test.admin.client_id, managementAudience, scopes, 3600);
}

/**
 * Starting and stopping a Gatehouse process. `prepare` opens storage, migrates and bootstraps the ready tenant;
 * `startServer` does that and listens. With GATEHOUSE_WORKERS > 1 the CLI runs `prepare` once in the primary and
 * `startServer({ prepared: true })` in each worker (see cli.ts).
 */
import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import type { Writable } from 'node:stream';
import type { LoggerOptions } from 'pino';
import { buildApp } from './app.js';
import { ensurePrivateDir } from './data-dir.js';
import type { Config } from './config.js';
import { KeyRing } from './crypto/key-ring.js';
import { loadMasterKey } from './crypto/master-key.js';
import { DeliveryWorker } from './events/worker.js';
import { createSealer, type Sealer } from './crypto/sealing.js';
import { createMemoryStore } from './http/rate-limit/memory-store.js';
import { createRedisStore } from './http/rate-limit/redis-store.js';
import type { RateLimitStore } from './http/rate-limit/store.js';
import { loggerOptions } from './logging.js';
import { AttackProtection } from './protection/attack-protection.js';
import { createMemoryCounterStore } from './protection/memory-counter-store.js';
import { proofIdsFor } from './protection/proof-ids.js';
import { createRedisCounterStore } from './protection/redis-counter-store.js';
import { EmailQueue } from './messaging/mailer.js';
import { JobRunner } from './jobs/runner.js';
import { TenantLogWriter } from './logs/writer.js';
import type { App, Services } from './services.js';
import { migrateToLatest, openStore, type QueryObserver, type Store } from './store/db.js';
import { bootstrap, type BootstrapResult } from './tenancy/bootstrap.js';
import { ClientOrigins } from './tenancy/client-origins.js';
import { createClusterBus, createLocalBus, createPostgresBus, createRedisBus, type ChangeBus } from './tenancy/change-bus.js';
import { ConfigCache } from './tenancy/config-cache.js';
import { signalTenantChanged } from './events/outbox.js';
import { parsePostgresUrl } from './store/db.js';
import { TenantResolver } from './tenancy/tenant-resolver.js';
import { Tracing } from './tracing/traces.js';

export interface Prepared {
  store: Store;
  sealer: Sealer;
  keyRing: KeyRing;
  /** Undefined in cluster workers: the primary bootstrapped before forking them. */
  bootstrap: BootstrapResult | undefined;
  migrationsApplied: string[];
  /** OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set (tracing/traces.ts). */
  tracing?: Tracing;
}

/** Storage opened and migrated, the master key loaded, and (unless told not to) the default tenant bootstrapped. */
export async function prepare(config: Config, options: { bootstrap?: boolean; onQuery?: QueryObserver } = {}): Promise<Prepared> {
  ensurePrivateDir(config.dataDir);
  const { key } = loadMasterKey(config.masterKey, config.dataDir);
  const sealer = createSealer(key);
  const tracing = config.otlpEndpoint ? new Tracing(config.otlpEndpoint, config.databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres') : undefined;
  const store = await openStore(config.databaseUrl, {
    sqliteSynchronous: config.sqliteSynchronous,
    ...(options.onQuery && { onQuery: options.onQuery }),
    ...(tracing && { onTimedQuery: (sqlText: string, ms: number) => tracing.query(sqlText, ms) }),
  });
  try {
    const { applied } = await migrateToLatest(store);
    const keyRing = new KeyRing(store.db, sealer);
    const result = options.bootstrap === false ? undefined : await bootstrap(store, keyRing, sealer, config);
    return { store, sealer, keyRing, bootstrap: result, migrationsApplied: applied, ...(tracing && { tracing }) };
  } catch (err) {
    await store.close();
    await tracing?.shutdown();
    throw err;
  }
}

export interface RunningServer {
  app: App;
  /** Where this process listens, e.g. http://127.0.0.1:3000 (the public URL may differ). */
  listenUrl: string;
  config: Config;
  prepared: Prepared;
  services: Services;
  /** Stops accepting, lets in-flight requests finish, then closes storage. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** Log to stdout (pretty on a terminal). Tests pass false. */
  log?: boolean;
  /** Log JSON lines into this stream instead (tests that read the log back). */
  logStream?: Writable;
  /** Reuse storage prepared by the caller. */
  prepared?: Prepared;
  /** Adds routes before the app starts listening (tests use it for probe routes). */
  configure?: (app: App) => void;
}

function rateLimitStoreFor(config: Config): RateLimitStore {
  return config.redisUrl ? createRedisStore(config.redisUrl) : createMemoryStore();
}

/** Redis when the nodes share one, else the PostgreSQL they share, else (SQLite) this cluster's IPC or nothing. */
function changeBusFor(config: Config, store: Store): ChangeBus {
  if (config.redisUrl) return createRedisBus(config.redisUrl, store.schema);
  if (store.dialect === 'postgres') return createPostgresBus(parsePostgresUrl(config.databaseUrl).connectionString, store.db, store.schema);
  return cluster.isWorker ? createClusterBus() : createLocalBus();
}

/** The long-lived services of one process, over prepared storage. */
export function createServices(config: Config, prepared: Prepared): Services {
  const services = newServices(config, prepared);
  // Whatever this node caches about a tenant goes when any node says the tenant changed.
  services.changes.subscribe((tenantId) => {
    services.configCache.invalidate(tenantId);
    services.clientOrigins.invalidate(tenantId);
    services.tenants.invalidate();
    services.attackProtection.forget(tenantId);
    signalTenantChanged(tenantId);
  });
  return services;
}

/** Closes what createServices opened besides storage. */
export async function closeServices(services: Services): Promise<void> {
  // After the app: the last requests' log events are written before storage closes.
  await services.tenantLogs.close();
  await services.rateLimitStore.close();
  await services.attackProtection.close();
  await services.proofIds.close();
  await services.changes.close();
}

function newServices(config: Config, prepared: Prepared): Services {
  const counters = config.redisUrl ? createRedisCounterStore(config.redisUrl) : createMemoryCounterStore();
  return {
    config,
    store: prepared.store,
    sealer: prepared.sealer,
    keyRing: prepared.keyRing,
    tenants: new TenantResolver(prepared.store.db),
    rateLimitStore: rateLimitStoreFor(config),
    clientOrigins: new ClientOrigins(prepared.store.db),
    configCache: new ConfigCache(prepared.store.db),
    attackProtection: new AttackProtection(prepared.store.db, counters, { sealer: prepared.sealer }),
    proofIds: proofIdsFor(config, prepared.store, counters),
    mailer: new EmailQueue(config, prepared.store, prepared.sealer),
    changes: changeBusFor(config, prepared.store),
    tenantLogs: new TenantLogWriter(prepared.store, { enabled: config.tenantLogs }),
    ...(prepared.tracing && { tracing: prepared.tracing }),
  };
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const prepared = options.prepared ?? (await prepare(config));
  const services = createServices(config, prepared);
  const logger = options.logStream
    ? ({ ...loggerOptions(config.logLevel, false), stream: options.logStream } as LoggerOptions)
    : options.log === false
      ? false
      : loggerOptions(config.logLevel, Boolean(process.stdout.isTTY));
  let app: App;
  try {
    await services.changes.ready;
    app = await buildApp(services, { logger });
    options.configure?.(app);
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await closeServices(services);
    await prepared.store.close();
    throw err;
  }
  const moved = prepared.bootstrap?.publicUrlChanged;
  if (moved) app.log.warn({ from: moved.from, to: moved.to, source: config.publicUrlSource }, "the default tenant's public URL changed");
  // SQLite in one process has one claimer, so rows still leased at start were left by a process that died.
  const deliveryWorker = new DeliveryWorker(prepared.store, prepared.sealer, app.log, {
    backchannelLogout: { keyRing: services.keyRing },
    releaseLeasesOnStart: prepared.store.dialect === 'sqlite' && !cluster.isWorker,
  });
  deliveryWorker.start();
  const emailQueue = services.mailer instanceof EmailQueue ? services.mailer : undefined;
  emailQueue?.start(app.log, { releaseLeasesOnStart: prepared.store.dialect === 'sqlite' && !cluster.isWorker });
  const jobRunner = new JobRunner(services, app.log, { releaseLeasesOnStart: prepared.store.dialect === 'sqlite' && !cluster.isWorker });
  jobRunner.start();
  services.tenantLogs.start(app.log);
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const listenHost = host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host;
  let closing: Promise<void> | undefined;
  return {
    app,
    listenUrl: `${config.tls ? 'https' : 'http'}://${listenHost}:${address.port}`,
    config,
    prepared,
    services,
    close: () => {
      closing ??= (async () => {
        await app.close();
        await jobRunner.stop();
        await deliveryWorker.stop();
        await emailQueue?.stop();
        await closeServices(services);
        await prepared.store.close();
        await prepared.tracing?.shutdown();
      })();
      return closing;
    },
  };
}

#!/usr/bin/env node
/**
 * gatehouse start [--https]   run the server (GATEHOUSE_WORKERS processes sharing the port)
 * gatehouse migrate           apply pending database migrations and exit
 * gatehouse keys rotate [--tenant NAME]
 *                             promote the next signing key, publish a new next key, retire the previous one
 * gatehouse export FILE [--tenant NAME]   write the tenant's configuration (no secrets) to FILE
 * gatehouse import FILE [--tenant NAME]   make the tenant match FILE (adds and updates, never deletes)
 * gatehouse users import|export FILE …    user import and export jobs (jobs/cli.ts)
 * gatehouse custom-domains ready DOMAIN   mark a configured custom domain verified (the operator vouches for it)
 */
import cluster from 'node:cluster';
import { readFileSync, writeFileSync } from 'node:fs';
import { ConfigError, loadConfig, type Config } from './config.js';
import { KeyRing } from './crypto/key-ring.js';
import { ensureDevCertificate } from './crypto/dev-certificate.js';
import { loadMasterKey } from './crypto/master-key.js';
import { createSealer } from './crypto/sealing.js';
import { describeDatabase, migrateToLatest, openStore } from './store/db.js';
import { findDefaultTenant, findTenantById, normalizeDomain, type Tenant } from './store/tenants.js';
import { findCustomDomainByName, markCustomDomainReady } from './store/custom-domains.js';
import { bootstrap, type BootstrapResult } from './tenancy/bootstrap.js';
import { buildApp } from './app.js';
import { relayClusterChanges } from './tenancy/change-bus.js';
import { closeServices, createServices, prepare, startServer, type RunningServer } from './server.js';
import { exportTenant, importTenant, managementCaller, TenantDocumentError } from './tenancy/tenant-as-code.js';
import { USERS_USAGE, UsersJobError, usersExportCommand, usersImportCommand } from './jobs/cli.js';

const USAGE = `Usage:
  gatehouse start [--https]               run the server
  gatehouse --version                     print the version
  gatehouse migrate                       apply pending database migrations
  gatehouse keys rotate [--tenant NAME]   rotate the tenant's signing keys (default tenant by default)
  gatehouse export FILE [--tenant NAME]   write APIs, clients, connections, grants and roles to FILE (no secrets)
  gatehouse import FILE [--tenant NAME]   make the tenant match FILE (idempotent; adds and updates, never deletes)
${USERS_USAGE}
  gatehouse custom-domains ready DOMAIN   mark a configured custom domain ready (you vouch that it reaches this server)
Configuration comes from the environment; see the README.`;

function banner(config: Config, result: BootstrapResult): string {
  const { tenant, admin, managementAudience } = result;
  const lines = [
    '',
    `Gatehouse is running (${describeDatabase(config.databaseUrl)}${config.redisUrl ? ', Redis counters' : ''}, ${config.workers} worker${config.workers > 1 ? 's' : ''})`,
    `  Issuer:           ${tenant.issuer}`,
    ...(result.publicUrlChanged
      ? [
          `  Public URL:       changed from ${result.publicUrlChanged.from} to ${result.publicUrlChanged.to} (${config.publicUrlSource});`,
          `                    tokens issued under the old issuer no longer validate`,
        ]
      : []),
    `  Discovery:        ${tenant.baseUrl}/.well-known/openid-configuration`,
    `  JWKS:             ${tenant.baseUrl}/.well-known/jwks.json`,
    `  Demo app:         ${tenant.baseUrl}/demo  (sign in, sign up, passwordless, svc v10 at ${tenant.baseUrl}/lib/svc.js)`,
    ...(config.devMailbox ? [`  Dev mailbox:      ${tenant.baseUrl}/dev/mailbox  (emails are kept here: no GATEHOUSE_SMTP_URL)`] : []),
    `  Health:           ${tenant.baseUrl}/healthz  ${tenant.baseUrl}/readyz`,
    `  Listening on:     ${config.host}:${config.port} (${config.hostSource})`,
    `  Management API:   ${managementAudience}`,
    `  Admin console:    ${tenant.baseUrl}/console/`,
  ];
  if (result.console.setupUrl) {
    lines.push(
      '',
      '  No console admin yet. Open this one-time link (valid 24 hours) to choose your password and open the console:',
      `    ${result.console.setupUrl}`,
    );
  }
  if (admin.fromEnvironment) {
    lines.push('', `  Admin client:     ${admin.client_id}, ${admin.created ? 'created ' : ''}from GATEHOUSE_ADMIN_CLIENT_ID / GATEHOUSE_ADMIN_CLIENT_SECRET (its secret is yours; not shown)`);
  } else if (admin.created && admin.client_secret && admin.file) {
    lines.push(
      '',
      '  Admin client created. Its secret is shown this once:',
      `    client_id:      ${admin.client_id}`,
      `    client_secret:  ${admin.client_secret}`,
      `  and saved (mode 0600) in ${admin.file}`,
    );
  } else {
    lines.push('', `  Admin credentials: ${admin.file} (client_id ${admin.client_id})`);
  }
  const secret = admin.file ? `$(node -p "require('${admin.file}').client_secret")` : '$GATEHOUSE_ADMIN_CLIENT_SECRET';
  // One line that keeps the token in a shell variable, and a first call that uses it.
  lines.push(
    '',
    '  Management API token (client credentials), then a first call with it:',
    `    TOKEN=$(curl -s ${tenant.baseUrl}/oauth/token -d grant_type=client_credentials -d client_id=${admin.client_id} \\`,
    `      -d client_secret=${secret} -d audience=${managementAudience} \\`,
    `      | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).access_token')`,
    `    curl -s -H "Authorization: Bearer $TOKEN" ${managementAudience}clients`,
    '',
  );
  return lines.join('\n');
}

function stopOnSignals(server: RunningServer): void {
  const stop = (signal: string) => {
    server.app.log.info({ signal }, 'draining in-flight requests, then exiting');
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('shutdown failed:', err);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

async function start(args: string[]): Promise<void> {
  let config = loadConfig();
  if (args.includes('--https') && !config.tls) {
    const cert = await ensureDevCertificate(config.dataDir);
    config = loadConfig(process.env, { tls: { certFile: cert.certFile, keyFile: cert.keyFile } });
  }

  if (config.workers > 1 && cluster.isPrimary) {
    // The primary migrates and bootstraps once, then forks workers that share the port.
    const prepared = await prepare(config);
    await prepared.store.close();
    // On SQLite the workers hear each other's tenant changes through this process (tenancy/change-bus.ts).
    relayClusterChanges();
    for (let i = 0; i < config.workers; i++) cluster.fork();
    let stopping = false;
    const stop = (exitCode: number) => {
      stopping = true;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
      cluster.disconnect(() => process.exit(exitCode));
    };
    // Running means a worker listens: the banner waits for that, and only a worker that listened is replaced when
    // it dies. One that dies before listening (the port is taken, say) would die again: the whole server stops.
    const listened = new Set<number>();
    cluster.on('listening', (worker) => {
      if (listened.size === 0) console.log(banner(config, prepared.bootstrap!));
      listened.add(worker.id);
    });
    cluster.on('exit', (worker, code) => {
      if (stopping) return;
      if (!listened.has(worker.id)) {
        console.error(
          code === PORT_IN_USE_EXIT
            ? portInUse({ code: 'EADDRINUSE', port: config.port, address: config.host })
            : `A worker exited (${code}) before it listened; stopping`,
        );
        stop(1);
        return;
      }
      console.error(`worker ${worker.process.pid} exited (${code}); starting another`);
      cluster.fork();
    });
    process.once('SIGTERM', () => stop(0));
    process.once('SIGINT', () => stop(0));
    return;
  }

  if (cluster.isWorker) {
    const prepared = await prepare(config, { bootstrap: false });
    stopOnSignals(await startServer(config, { prepared }));
    return;
  }

  const server = await startServer(config);
  stopOnSignals(server);
  console.log(banner(config, server.prepared.bootstrap!));
}

async function migrate(): Promise<void> {
  const config = loadConfig();
  const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  try {
    const { applied } = await migrateToLatest(store);
    console.log(applied.length ? `Applied: ${applied.join(', ')}` : `${describeDatabase(config.databaseUrl)} is up to date`);
  } finally {
    await store.close();
  }
}

function tenantNameFrom(args: string[]): string | undefined {
  const flag = args.indexOf('--tenant');
  return flag >= 0 ? args[flag + 1] : undefined;
}

/** Runs `work` against the named (or default) tenant's Management API, in-process, without listening. */
async function withManagementApi(args: string[], work: (call: Awaited<ReturnType<typeof managementCaller>>, tenant: Tenant) => Promise<void>) {
  const config = loadConfig();
  // No bootstrap: the tenant is as the server's own start stored it. This shell's PORT or public URL may differ
  // from the running server's, and must not move its issuer (issue #19: `export` rewrote it to localhost:3000).
  const prepared = await prepare(config, { bootstrap: false });
  const services = createServices(config, prepared);
  const app = await buildApp(services, { logger: false });
  try {
    const name = tenantNameFrom(args);
    let row = name
      ? await prepared.store.db.selectFrom('tenants').select('id').where('name', '=', name).executeTakeFirst()
      : await findDefaultTenant(prepared.store.db);
    // A data directory no server has started on yet (tenant as code before the first start, as in a deploy
    // pipeline): the default tenant is created from this configuration, as `gatehouse start` would. An existing
    // tenant is never touched.
    if (!row && !name) row = (await bootstrap(prepared.store, prepared.keyRing, prepared.sealer, config)).tenant;
    const tenant = row && (await findTenantById(prepared.store.db, row.id));
    if (!tenant) throw new ConfigError(`no tenant named ${name ?? 'default'}`);
    await work(await managementCaller(app, services, tenant), tenant);
  } finally {
    await app.close();
    await closeServices(services);
    await prepared.store.close();
  }
}

async function exportCommand(args: string[]): Promise<void> {
  const file = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--tenant');
  if (!file) throw new ConfigError('usage: gatehouse export FILE [--tenant NAME]');
  await withManagementApi(args, async (call, tenant) => {
    const doc = await exportTenant(call, tenant);
    writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
    console.log(
      `Exported ${tenant.name}: ${doc.resource_servers.length} APIs, ${doc.clients.length} clients, ${doc.connections.length} connections, ` +
        `${doc.client_grants.length} client grants, ${doc.roles.length} roles → ${file} (no secrets)`,
    );
  });
}

async function importCommand(args: string[]): Promise<void> {
  const file = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--tenant');
  if (!file) throw new ConfigError('usage: gatehouse import FILE [--tenant NAME]');
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new TenantDocumentError(`${file}: cannot read it as JSON (${(err as Error).message})`);
  }
  await withManagementApi(args, async (call, tenant) => {
    const report = await importTenant(call, tenant, doc);
    for (const line of report.created) console.log(`  created    ${line}`);
    for (const line of report.updated) console.log(`  updated    ${line}`);
    console.log(`Imported into ${tenant.name}: ${report.created.length} created, ${report.updated.length} updated, ${report.unchanged.length} unchanged`);
  });
}

async function rotateKeys(args: string[]): Promise<void> {
  const config = loadConfig();
  const tenantName = tenantNameFrom(args);
  const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  try {
    await migrateToLatest(store);
    const tenant: Tenant | undefined = tenantName
      ? await store.db
          .selectFrom('tenants')
          .select('id')
          .where('name', '=', tenantName)
          .executeTakeFirst()
          .then((row) => (row ? ({ id: row.id } as Tenant) : undefined))
      : await findDefaultTenant(store.db);
    if (!tenant) throw new ConfigError(tenantName ? `no tenant named ${tenantName}` : 'no default tenant yet: run gatehouse start once');
    const keyRing = new KeyRing(store.db, createSealer(loadMasterKey(config.masterKey, config.dataDir).key));
    const kid = await keyRing.rotate(tenant.id);
    console.log(`Rotated. Now signing with ${kid}; the previous key stays published until the next rotation.`);
  } finally {
    await store.close();
  }
}

async function customDomainReady(args: string[]): Promise<void> {
  const [name] = args;
  if (!name) throw new ConfigError('usage: gatehouse custom-domains ready DOMAIN');
  const store = await openStore(loadConfig().databaseUrl);
  try {
    await migrateToLatest(store);
    const domain = await findCustomDomainByName(store.db, normalizeDomain(name));
    if (!domain) throw new ConfigError(`no custom domain ${name} is configured (POST /api/v2/custom-domains first)`);
    await markCustomDomainReady(store.db, domain);
    console.log(`${domain.domain} is ready: its tenant answers on it within a few seconds.`);
  } finally {
    await store.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  switch (command) {
    case 'start':
      return start(args);
    case 'migrate':
      return migrate();
    case 'keys':
      if (args[0] === 'rotate') return rotateKeys(args.slice(1));
      break;
    case 'export':
      return exportCommand(args);
    case 'import':
      return importCommand(args);
    case 'users':
      if (args[0] === 'import') return usersImportCommand(args.slice(1));
      if (args[0] === 'export') return usersExportCommand(args.slice(1));
      break;
    case 'custom-domains':
      if (args[0] === 'ready') return customDomainReady(args.slice(1));
      break;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return;
    case 'version':
    case '--version':
    case '-v':
      console.log(`gatehouse ${version()}`);
      return;
  }
  console.error(`Unknown command: ${argv.join(' ')}\n\n${USAGE}`);
  process.exitCode = 2;
}

/** This package's version, from its package.json (one directory up from src/ and from dist/). */
function version(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/**
 * How a worker tells the primary that the port is taken: the primary prints the line once (not once per worker)
 * and stops instead of starting another worker that would fail the same way. 98 is Linux's EADDRINUSE.
 */
const PORT_IN_USE_EXIT = 98;

/** A port another process holds: one line that says which, and what to do, instead of a stack. */
function portInUse(err: unknown): string | undefined {
  const { code, port, address } = err as { code?: unknown; port?: unknown; address?: unknown };
  if (code !== 'EADDRINUSE') return undefined;
  const where = typeof address === 'string' && typeof port === 'number' ? `${address}:${port}` : String(port);
  return `Port ${String(port)} is already in use (${where}): stop what listens there, or choose another port, e.g. PORT=${typeof port === 'number' ? port + 1 : 3001} npx gatehouse start`;
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const inUse = portInUse(err);
  if (inUse) {
    if (cluster.isWorker) process.exit(PORT_IN_USE_EXIT);
    console.error(inUse);
    process.exit(1);
  }
  if (err instanceof ConfigError) {
    console.error(`Configuration error: ${err.message}`);
    process.exit(78); // EX_CONFIG
  }
  if (err instanceof UsersJobError) {
    console.error(`Users job failed: ${err.message}`);
    process.exit(65); // EX_DATAERR
  }
  if (err instanceof TenantDocumentError) {
    console.error(`Import/export failed: ${err.message}`);
    process.exit(65); // EX_DATAERR
  }
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});

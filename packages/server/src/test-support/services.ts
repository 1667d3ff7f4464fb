/**
 * Real PostgreSQL and Redis for tests. Outside CI an unreachable service skips the suites that need it, with a
 * printed notice; with CI=true it is a failure, so CI never passes without having run them.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';

export const POSTGRES_URL = process.env.GATEHOUSE_TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';
export const REDIS_URL = process.env.GATEHOUSE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

async function reachable(probe: () => Promise<void>, what: string): Promise<boolean> {
  try {
    await probe();
    return true;
  } catch (err) {
    if (IN_CI) throw new Error(`${what} is required in CI but unreachable: ${(err as Error).message}`, { cause: err });
    console.warn(`\n[notice] ${what} unreachable (${(err as Error).message}); skipping the tests that need it.\n`);
    return false;
  }
}

export function postgresAvailable(): Promise<boolean> {
  return reachable(async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
    await client.connect();
    await client.end();
  }, `PostgreSQL at ${POSTGRES_URL}`);
}

export function redisAvailable(): Promise<boolean> {
  const { hostname, port } = new URL(REDIS_URL);
  return reachable(
    () =>
      new Promise<void>((resolve, reject) => {
        const socket = net.connect({ host: hostname, port: Number(port || 6379), timeout: 2000 });
        socket.once('connect', () => {
          socket.end();
          resolve();
        });
        socket.once('timeout', () => {
          socket.destroy();
          reject(new Error('timeout'));
        });
        socket.once('error', reject);
      }),
    `Redis at ${REDIS_URL}`,
  );
}

/** A PostgreSQL URL that selects a fresh schema; `drop()` removes it. */
export function freshPostgresSchema(): { url: string; drop: () => Promise<void> } {
  const schema = `gh_test_${randomBytes(6).toString('hex')}`;
  const url = `${POSTGRES_URL}${POSTGRES_URL.includes('?') ? '&' : '?'}schema=${schema}`;
  return {
    url,
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A TCP port that was free a moment ago (the server binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

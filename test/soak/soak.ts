/**
 * The two-node soak (issue 18): two `gatehouse start` processes on one PostgreSQL schema and one Redis, under a
 * mixed workload (signups, password logins with refresh tokens, refresh rotations, Management API user
 * creations and updates, with an event stream delivering to a real local HTTP receiver). Halfway through, the
 * second process is killed with SIGKILL and started again. At the end it checks:
 *  - every acknowledged write exists (signed-up and created users, every acknowledged metadata update);
 *  - every committed change's event reached the receiver at least once (events table vs webhook ids);
 *  - refresh-token families are consistent (at most one live token per family in the database; a family's
 *    latest token works on the other node, a rotated-away one is refused and revokes the family);
 *  - rate-limit and brute-force counters are shared (a limit set through /api/v2/rate-limit-policies admits
 *    exactly its capacity over both nodes; ten wrong passwords over both nodes block the identifier on both);
 *  - no process grew its memory (RSS) by more than 20% after its warm-up.
 * Used by `npm run soak` (test/soak/run.ts, 10 minutes by default) and by the CI slice (soak.test.ts).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startReceiver, type Receiver } from '../../packages/server/src/events/test-receiver.js';
import { runCli, type CliProcess } from '../../packages/server/src/test-support/cli.js';
import { requestNode, type NodeResponse } from '../../packages/server/src/test-support/nodes.js';
import { freePort, freshPostgresSchema, POSTGRES_URL, REDIS_URL } from '../../packages/server/src/test-support/services.js';

const PASSWORD_REALM = 'http://auth0.com/oauth/grant-type/password-realm';
const CONNECTION = 'Username-Password-Authentication';
const PASSWORD = 'soak horse battery staple 7';

export interface SoakOptions {
  durationMs: number;
  /** Requests in flight at once. */
  concurrency?: number;
  log?: (line: string) => void;
}

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface OperationFigures {
  ok: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
}

export interface SoakReport {
  durationMs: number;
  operations: Record<string, OperationFigures>;
  memory: { node: string; baselineMb: number; finalMb: number; growth: number }[];
  events: { committed: number; delivered: number; duplicates: number; drainMs: number };
  checks: Check[];
  ok: boolean;
}

interface Node {
  name: string;
  port: number;
  process: CliProcess | undefined;
  up: boolean;
  /** RSS samples (MB) since this process started: [ms since its start, MB]. */
  samples: [number, number][];
  startedAt: number;
}

function rssMb(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => undefined);
  const concurrency = options.concurrency ?? 8;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-soak-'));
  const schema = freshPostgresSchema();
  const receiver: Receiver = await startReceiver();
  const nodes: Node[] = [];
  const publicUrl = `http://localhost:${await freePort()}`;
  const env = {
    DATABASE_URL: schema.url,
    REDIS_URL,
    GATEHOUSE_DATA_DIR: dataDir,
    GATEHOUSE_PUBLIC_URL: publicUrl,
    HOST: '127.0.0.1',
    GATEHOUSE_LOG_LEVEL: 'warn',
  };
  const db = new pg.Client({ connectionString: POSTGRES_URL });
  const checks: Check[] = [];
  const check = (name: string, ok: boolean, detail: string) => {
    checks.push({ name, ok, detail });
    log(`${ok ? 'PASS' : 'FAIL'} ${name}: ${detail}`);
  };

  async function start(node: Node): Promise<void> {
    node.process = runCli(['start'], { ...env, PORT: String(node.port) });
    node.startedAt = Date.now();
    node.samples = [];
    for (;;) {
      if (node.process.child.exitCode !== null) throw new Error(`${node.name} exited:\n${node.process.output()}`);
      try {
        const res = await fetch(`http://127.0.0.1:${node.port}/readyz`);
        if (res.status === 200) break;
      } catch {
        // Not listening yet.
      }
      await sleep(100);
    }
    node.up = true;
  }

  const call = (node: Node, method: string, p: string, o: Parameters<typeof requestNode>[4] = {}): Promise<NodeResponse> =>
    requestNode(`http://127.0.0.1:${node.port}`, publicUrl, method, p, o);

  try {
    await db.connect();
    const first: Node = { name: 'node-1', port: Number(new URL(publicUrl).port), process: undefined, up: false, samples: [], startedAt: 0 };
    const second: Node = { name: 'node-2', port: await freePort(), process: undefined, up: false, samples: [], startedAt: 0 };
    nodes.push(first, second);
    await start(first);
    await start(second);
    log(`two nodes up on PostgreSQL schema ${new URL(schema.url).searchParams.get('schema')} and Redis`);

    // --- setup, through the Management API --------------------------------------------------------------
    const admin = JSON.parse(readFileSync(path.join(dataDir, 'admin-credentials.json'), 'utf8')) as { client_id: string; client_secret: string };
    const tokenRes = await call(first, 'POST', '/oauth/token', {
      form: { grant_type: 'client_credentials', client_id: admin.client_id, client_secret: admin.client_secret, audience: `${publicUrl}/api/v2/` },
    });
    const token = tokenRes.body.access_token as string;
    if (!token) throw new Error(`no management token: ${tokenRes.text}`);
    const management = (node: Node, method: string, p: string, json?: unknown) => call(node, method, `/api/v2${p}`, { token, ...(json !== undefined && { json }) });
    const must = async (what: string, res: Promise<NodeResponse>, status: number): Promise<NodeResponse> => {
      const r = await res;
      if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text}`);
      return r;
    };
    // The workload is not what these limits are for: lift them (through the policies API), and turn off
    // suspicious-IP throttling (every request comes from one address).
    for (const bucket of ['token', 'dbconnections', 'management', 'login', 'userinfo']) {
      await must(`lift ${bucket}`, management(first, 'PATCH', `/rate-limit-policies/${bucket}`, { capacity: 1_000_000, per_second: 1_000_000 }), 200);
    }
    await must('suspicious ip off', management(first, 'PATCH', '/attack-protection/suspicious-ip-throttling', { enabled: false }), 200);
    const connections = await must('connections', management(first, 'GET', `/connections?name=${CONNECTION}`), 200);
    const connectionId = (connections.body as unknown as { id: string }[])[0]!.id;
    const app = await must(
      'client',
      management(first, 'POST', '/clients', {
        name: 'soak app',
        app_type: 'regular_web',
        token_endpoint_auth_method: 'client_secret_post',
        grant_types: [PASSWORD_REALM, 'refresh_token'],
        refresh_token: { rotation_type: 'rotating', expiration_type: 'expiring', leeway: 0 },
      }),
      201,
    );
    const client = { client_id: app.body.client_id as string, client_secret: app.body.client_secret as string };
    await must('enable connection', management(first, 'PATCH', `/connections/${connectionId}/clients`, [{ client_id: client.client_id, status: true }]), 204);
    await must(
      'stream',
      management(second, 'POST', '/event-streams', {
        name: 'soak',
        subscriptions: [{ event_type: 'user.created' }, { event_type: 'user.updated' }],
        destination: { type: 'webhook', configuration: { webhook_endpoint: receiver.url, webhook_authorization: { method: 'bearer', token: 'soak' } } },
      }),
      201,
    );
    const tenantRow = await db.query<{ id: string }>(`select id from "${new URL(schema.url).searchParams.get('schema')}".tenants where is_default = 1`);
    const tenantId = tenantRow.rows[0]!.id;
    const q = (text: string, values: unknown[] = []) => db.query(text.replaceAll('$schema', `"${new URL(schema.url).searchParams.get('schema')}"`), values);

    // --- the workload ---------------------------------------------------------------------------------
    const latencies = new Map<string, number[]>();
    const counts = new Map<string, { ok: number; failed: number }>();
    const acked = { signups: new Set<string>(), created: new Set<string>(), metadata: [] as { userId: string; key: string }[] };
    interface Family {
      tokens: string[];
      certain: boolean;
    }
    const families: Family[] = [];
    let round = 0;
    const pick = (): Node => {
      const up = nodes.filter((n) => n.up);
      return up[round++ % up.length]!;
    };
    const timed = async (op: string, work: () => Promise<boolean>): Promise<void> => {
      const started = performance.now();
      const ok = await work().catch(() => false);
      const c = counts.get(op) ?? { ok: 0, failed: 0 };
      if (ok) c.ok++;
      else c.failed++;
      counts.set(op, c);
      if (ok) latencies.set(op, [...(latencies.get(op) ?? []), performance.now() - started]);
    };
    let sequence = 0;

    async function worker(id: number): Promise<void> {
      const mine: { users: string[]; signedUp: string[]; families: Family[] } = { users: [], signedUp: [], families: [] };
      while (Date.now() < until) {
        const r = Math.random();
        const node = pick();
        if (r < 0.12 || mine.signedUp.length === 0) {
          const email = `soak-${id}-${++sequence}@example.com`;
          await timed('signup', async () => {
            const res = await call(node, 'POST', '/dbconnections/signup', { json: { client_id: client.client_id, email, password: PASSWORD, connection: CONNECTION } });
            if (res.status !== 200) return false;
            acked.signups.add(email);
            mine.signedUp.push(email);
            return true;
          });
        } else if (r < 0.3) {
          const email = mine.signedUp[Math.floor(Math.random() * mine.signedUp.length)]!;
          await timed('login', async () => {
            const res = await call(node, 'POST', '/oauth/token', {
              form: { grant_type: PASSWORD_REALM, ...client, realm: CONNECTION, username: email, password: PASSWORD, scope: 'openid offline_access' },
            });
            if (res.status !== 200 || typeof res.body.refresh_token !== 'string') return false;
            const family = { tokens: [res.body.refresh_token], certain: true };
            families.push(family);
            mine.families.push(family);
            return true;
          });
        } else if (r < 0.6 && mine.families.some((f) => f.certain)) {
          const live = mine.families.filter((f) => f.certain);
          const family = live[Math.floor(Math.random() * live.length)]!;
          await timed('refresh', async () => {
            let res: NodeResponse;
            try {
              res = await call(node, 'POST', '/oauth/token', { form: { grant_type: 'refresh_token', ...client, refresh_token: family.tokens.at(-1)! } });
            } catch (err) {
              // The node died mid-exchange: whether it rotated is unknown, so the family leaves the checks.
              family.certain = false;
              throw err;
            }
            if (res.status !== 200) {
              family.certain = false;
              return false;
            }
            family.tokens.push(res.body.refresh_token as string);
            return true;
          });
        } else if (r < 0.75 || mine.users.length === 0) {
          await timed('management-create', async () => {
            const res = await management(node, 'POST', '/users', { connection: CONNECTION, email: `made-${id}-${++sequence}@example.com`, password: PASSWORD });
            if (res.status !== 201) return false;
            acked.created.add(res.body.user_id as string);
            mine.users.push(res.body.user_id as string);
            return true;
          });
        } else {
          // Each worker updates only its own users, one request at a time: every acknowledged key must stay.
          const userId = mine.users[Math.floor(Math.random() * mine.users.length)]!;
          const key = `k${++sequence}`;
          await timed('management-update', async () => {
            const res = await management(node, 'PATCH', `/users/${encodeURIComponent(userId)}`, { user_metadata: { [key]: sequence } });
            if (res.status !== 200) return false;
            acked.metadata.push({ userId, key });
            return true;
          });
        }
      }
    }

    const began = Date.now();
    // The workload runs its duration, and on after the killed node is back for long enough to warm up and be
    // measured (a fifth of the duration, at least 10 s).
    let until = began + options.durationMs;
    const sampler = setInterval(() => {
      for (const node of nodes) {
        const mb = node.up ? rssMb(node.process?.child.pid) : undefined;
        if (mb !== undefined) node.samples.push([Date.now() - node.startedAt, mb]);
      }
    }, Math.max(500, Math.min(5000, options.durationMs / 60)));
    const killer = (async () => {
      await sleep(options.durationMs / 2);
      log(`SIGKILL ${second.name} (pid ${second.process!.child.pid}) at ${Math.round((Date.now() - began) / 1000)} s`);
      second.up = false;
      second.process!.child.kill('SIGKILL');
      await second.process!.exited;
      await start(second);
      log(`${second.name} back at ${Math.round((Date.now() - began) / 1000)} s`);
      until = Math.max(until, Date.now() + Math.max(10_000, options.durationMs / 5));
    })();
    await Promise.all([killer, ...Array.from({ length: concurrency }, (_, i) => worker(i))]);
    clearInterval(sampler);
    log(`workload done: ${[...counts].map(([op, c]) => `${op} ${c.ok}/${c.ok + c.failed}`).join(', ')}`);

    // --- checks ---------------------------------------------------------------------------------------
    const missingSignups = [];
    for (const email of acked.signups) {
      const row = await q(`select 1 from $schema.users where tenant_id = $1 and email = $2`, [tenantId, email]);
      if (row.rowCount === 0) missingSignups.push(email);
    }
    const missingCreated = [];
    for (const userId of acked.created) {
      const row = await q(`select 1 from $schema.users where tenant_id = $1 and user_id = $2`, [tenantId, userId]);
      if (row.rowCount === 0) missingCreated.push(userId);
    }
    const missingKeys = [];
    for (const { userId, key } of acked.metadata) {
      const row = await q(`select user_metadata from $schema.users where tenant_id = $1 and user_id = $2`, [tenantId, userId]);
      const metadata = row.rows[0] ? (JSON.parse(row.rows[0].user_metadata as string) as Record<string, unknown>) : {};
      if (!(key in metadata)) missingKeys.push(`${userId}.${key}`);
    }
    check(
      'every acknowledged write exists',
      missingSignups.length + missingCreated.length + missingKeys.length === 0,
      `${acked.signups.size} signups, ${acked.created.size} created users, ${acked.metadata.length} metadata updates acknowledged; missing ${missingSignups.length + missingCreated.length + missingKeys.length}`,
    );

    // Events: every committed user.created/user.updated reaches the receiver (a killed node's leases run out first).
    const drainStarted = Date.now();
    const committed = async () =>
      new Set(
        (await q(`select id from $schema.events where tenant_id = $1 and type in ('user.created', 'user.updated')`, [tenantId])).rows.map((r) => r.id as string),
      );
    const delivered = () => new Set(receiver.received.map((r) => r.headers['webhook-id'] as string));
    let events = await committed();
    let undelivered = [...events].filter((id) => !delivered().has(id));
    while (undelivered.length > 0 && Date.now() - drainStarted < 120_000) {
      await sleep(500);
      events = await committed();
      const got = delivered();
      undelivered = [...events].filter((id) => !got.has(id));
    }
    const drainMs = Date.now() - drainStarted;
    const duplicates = receiver.received.length - delivered().size;
    check(
      "every committed change's event delivered at least once",
      undelivered.length === 0 && events.size > 0,
      `${events.size} events committed, ${events.size - undelivered.length} delivered (${duplicates} duplicate deliveries), drained ${drainMs} ms after the workload`,
    );

    // Refresh-token families: at most one live token each; across nodes, the latest works and a rotated-away one revokes.
    const doubleLive = await q(
      `select family_id from $schema.refresh_tokens where tenant_id = $1 and rotated_at is null and revoked_at is null group by family_id having count(*) > 1`,
      [tenantId],
    );
    const certain = families.filter((f) => f.certain && f.tokens.length >= 2).slice(0, 20);
    const wrong: string[] = [];
    for (const family of certain) {
      const latest = await call(second, 'POST', '/oauth/token', { form: { grant_type: 'refresh_token', ...client, refresh_token: family.tokens.at(-1)! } });
      const reused = await call(first, 'POST', '/oauth/token', { form: { grant_type: 'refresh_token', ...client, refresh_token: family.tokens.at(-2)! } });
      const after = latest.status === 200 ? await call(second, 'POST', '/oauth/token', { form: { grant_type: 'refresh_token', ...client, refresh_token: latest.body.refresh_token as string } }) : latest;
      if (latest.status !== 200 || reused.status !== 400 || after.status !== 400) wrong.push(`${latest.status}/${reused.status}/${after.status}`);
    }
    check(
      'refresh-token families consistent',
      doubleLive.rowCount === 0 && wrong.length === 0 && certain.length > 0,
      `${families.length} families (${families.filter((f) => !f.certain).length} left uncertain by the kill); ${doubleLive.rowCount} with two live tokens; ${certain.length} checked across nodes (latest works, rotated-away one refused and revokes), ${wrong.length} wrong`,
    );

    // Rate limits: a policy of 10 admits exactly 10 requests over both nodes.
    await must('jwks policy', management(first, 'PATCH', '/rate-limit-policies/jwks', { capacity: 10, per_second: 0.001 }), 200);
    const jwks: number[] = [];
    for (let i = 0; i < 20; i++) jwks.push((await call(nodes[i % 2]!, 'GET', '/.well-known/jwks.json')).status);
    check('rate-limit counters shared', jwks.filter((s) => s === 200).length === 10, `20 requests alternating nodes under a limit of 10: ${jwks.filter((s) => s === 200).length} admitted, ${jwks.filter((s) => s === 429).length} refused`);

    // Brute force: 14 wrong passwords over both nodes get exactly 10 checked; the right one is then refused on both.
    const victim = `victim-${Date.now()}@example.com`;
    await must('victim', call(first, 'POST', '/dbconnections/signup', { json: { client_id: client.client_id, email: victim, password: PASSWORD, connection: CONNECTION } }), 200);
    const guesses: number[] = [];
    for (let i = 0; i < 14; i++) {
      const res = await call(nodes[i % 2]!, 'POST', '/oauth/token', { form: { grant_type: PASSWORD_REALM, ...client, realm: CONNECTION, username: victim, password: `wrong ${i}` } });
      guesses.push(res.status);
    }
    const right = await Promise.all(
      nodes.map(async (n) => (await call(n, 'POST', '/oauth/token', { form: { grant_type: PASSWORD_REALM, ...client, realm: CONNECTION, username: victim, password: PASSWORD } })).status),
    );
    check(
      'brute-force counters shared',
      guesses.filter((s) => s === 403).length === 10 && guesses.filter((s) => s === 429).length === 4 && right.every((s) => s === 429),
      `14 wrong passwords alternating nodes: ${guesses.filter((s) => s === 403).length} checked (403), ${guesses.filter((s) => s === 429).length} refused (429); the right one then: ${right.join(', ')}`,
    );

    // Memory: each process's RSS at the end against its RSS after warm-up (a third of its life, at least 5 s in).
    const memory = nodes.map((node) => {
      const life = node.samples.at(-1)?.[0] ?? 0;
      const warm = Math.max(5000, life / 3);
      const after = node.samples.filter(([t]) => t >= warm);
      const window = Math.max(1, Math.floor(after.length / 5));
      const avg = (xs: [number, number][]) => xs.reduce((sum, [, mb]) => sum + mb, 0) / Math.max(1, xs.length);
      const baselineMb = avg(after.slice(0, window));
      const finalMb = avg(after.slice(-window));
      return { node: node === second ? `${node.name} (restarted)` : node.name, baselineMb, finalMb, growth: baselineMb > 0 ? finalMb / baselineMb - 1 : 0 };
    });
    check(
      'no process grew its memory by more than 20% after warm-up',
      memory.every((m) => m.baselineMb > 0 && m.growth <= 0.2),
      memory.map((m) => `${m.node} ${m.baselineMb.toFixed(0)} → ${m.finalMb.toFixed(0)} MB (${(m.growth * 100).toFixed(1)}%)`).join('; '),
    );

    const operations = Object.fromEntries(
      [...counts].map(([op, c]) => {
        const sorted = [...(latencies.get(op) ?? [])].sort((a, b) => a - b);
        return [op, { ok: c.ok, failed: c.failed, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) }];
      }),
    );
    return {
      durationMs: Date.now() - began,
      operations,
      memory,
      events: { committed: events.size, delivered: events.size - undelivered.length, duplicates, drainMs },
      checks,
      ok: checks.every((c) => c.ok),
    };
  } finally {
    for (const node of nodes) {
      if (node.process && node.process.child.exitCode === null && node.process.child.signalCode === null) {
        node.process.child.kill('SIGTERM');
        await Promise.race([node.process.exited, sleep(10_000)]);
        if (node.process.child.exitCode === null && node.process.child.signalCode === null) node.process.child.kill('SIGKILL');
      }
    }
    await receiver.close();
    await db.end().catch(() => undefined);
    await schema.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function formatReport(report: SoakReport): string {
  const lines = [`Soak: two nodes on PostgreSQL + Redis, ${Math.round(report.durationMs / 1000)} s of workload, one SIGKILL and restart halfway`, ''];
  lines.push('operation            ok  failed   p50 ms   p99 ms');
  for (const [op, f] of Object.entries(report.operations)) {
    lines.push(`${op.padEnd(18)} ${String(f.ok).padStart(5)} ${String(f.failed).padStart(7)} ${f.p50Ms.toFixed(1).padStart(8)} ${f.p99Ms.toFixed(1).padStart(8)}`);
  }
  lines.push('');
  for (const c of report.checks) lines.push(`${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`);
  lines.push('', report.ok ? 'all checks passed' : 'SOME CHECKS FAILED');
  return lines.join('\n');
}

/**
 * The server under fuzzing, in a process of its own (started by target.ts with --expose-gc), so that its memory
 * is measured apart from the fuzzer's: the real server on SQLite, sending to an SMTP server with credentials
 * (so that SMTP secrets exist to leak), proxies trusted from loopback (so that each attack-protection race can come from its own
 * client IP), and rate limits lifted (so that inputs reach the handlers instead of the limiter; attack
 * protection keeps its defaults). It tells its parent the secrets no response may ever contain, and answers
 * `measure` with its memory after a full garbage collection.
 */
import { exportJWK } from 'jose';
import { loadMasterKey } from '../../packages/server/src/crypto/master-key.js';
import { DEFAULT_LIMITS } from '../../packages/server/src/http/rate-limit/buckets.js';
import { updateTenant } from '../../packages/server/src/store/tenants.js';
import { startTestServer } from '../../packages/server/src/test-support/server.js';

// The SMTP server runs in the parent (target.ts): the emails it keeps must not count as this process's memory.
const smtpUrl = process.env.FUZZ_SMTP_URL!;
let test = await startTestServer({ env: { GATEHOUSE_SMTP_URL: smtpUrl, GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1/32' } });
const { tenant } = test.server.prepared.bootstrap!;
const lifted = Object.fromEntries(Object.keys(DEFAULT_LIMITS).map((bucket) => [bucket, { capacity: 1_000_000, per_second: 1_000_000 }]));
await updateTenant(test.server.prepared.store.db, tenant.id, { settings: { ...tenant.settings, rate_limits: lifted } });
test = await test.restart();

const { key } = loadMasterKey(test.server.config.masterKey, test.dataDir);
const signing = await exportJWK((await test.server.prepared.keyRing.signingKey(tenant.id)).privateKey);
const secrets: Record<string, string> = {
  'admin client secret': test.admin.client_secret,
  'master key (hex)': key.toString('hex'),
  'master key (base64)': key.toString('base64'),
  'master key (base64url)': key.toString('base64url'),
  'SMTP password': decodeURIComponent(new URL(smtpUrl).password),
  ...Object.fromEntries(['d', 'p', 'q', 'dp', 'dq', 'qi'].map((part) => [`signing key ${part}`, String(signing[part as keyof typeof signing])])),
};

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with --expose-gc');
  collect();
  collect();
}

process.on('message', (message: { type: string }) => {
  if (message.type === 'measure') {
    gc();
    const { rss, heapUsed, external } = process.memoryUsage();
    process.send!({ type: 'memory', rss, heapUsed, external });
  }
  if (message.type === 'stop') {
    void test.close().then(() => process.exit(0));
  }
});
process.send!({ type: 'ready', url: test.url, admin: test.admin, secrets, tenantId: tenant.id, managementAudience: test.server.prepared.bootstrap!.managementAudience });

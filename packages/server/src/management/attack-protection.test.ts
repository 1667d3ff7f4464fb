/**
 * /api/v2/attack-protection/* over real HTTP: Auth0's defaults, merging PATCHes (stages field by field), the
 * stored settings, validation in the management error shape (never a 500), scopes, and a raised brute-force
 * threshold lifting the blocks. Runs on SQLite, and on PostgreSQL when reachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTenantById } from '../store/tenants.js';
import { insertUserBlock, listUserBlocks } from '../store/users.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';

type Json = Record<string, unknown>;
type Dialect = 'sqlite' | 'postgres';

const dialects: Dialect[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];
if (dialects.length === 1) {
  describe('attack protection settings: PostgreSQL', () => {
    it.skip('PostgreSQL unreachable: skipped (see the notice above)', () => undefined);
  });
}

const BRUTE_FORCE = '/attack-protection/brute-force-protection';
const BREACHED = '/attack-protection/breached-password-detection';
const SUSPICIOUS = '/attack-protection/suspicious-ip-throttling';

describe.each(dialects)('Management API attack protection (%s)', (dialect) => {
  let server: TestServer;
  let token: string;

  async function call(method: string, path: string, body?: unknown, options: { token?: string; raw?: string } = {}) {
    const res = await fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.token ?? token}`,
        ...((body !== undefined || options.raw !== undefined) && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      ...(options.raw !== undefined && { body: options.raw }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json };
  }

  const tenantId = () => server.server.prepared.bootstrap!.tenant.id;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    token = await managementToken(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('shows the defaults of C.10 on a fresh tenant', async () => {
    expect(await call('GET', BRUTE_FORCE)).toEqual({
      status: 200,
      body: { enabled: true, shields: ['block', 'user_notification'], allowlist: [], mode: 'count_per_identifier_and_ip', max_attempts: 10 },
    });
    expect(await call('GET', BREACHED)).toEqual({
      status: 200,
      body: {
        enabled: true,
        shields: ['block'],
        admin_notification_frequency: [],
        method: 'standard',
        stage: { 'pre-user-registration': { shields: ['block'] }, 'pre-change-password': { shields: ['block'] } },
      },
    });
    expect(await call('GET', SUSPICIOUS)).toEqual({
      status: 200,
      body: {
        enabled: true,
        shields: ['admin_notification', 'block'],
        allowlist: [],
        stage: { 'pre-login': { max_attempts: 100, rate: 864000 }, 'pre-user-registration': { max_attempts: 50, rate: 1728000 } },
      },
    });
  });

  it('merges a brute-force PATCH over the current settings and stores it under the tenant', async () => {
    const res = await call('PATCH', BRUTE_FORCE, { mode: 'count_per_identifier', allowlist: ['10.0.0.0/8', '2001:db8::1'], max_attempts: 5 });
    expect(res).toEqual({
      status: 200,
      body: { enabled: true, shields: ['block', 'user_notification'], allowlist: ['10.0.0.0/8', '2001:db8::1'], mode: 'count_per_identifier', max_attempts: 5 },
    });
    const second = await call('PATCH', BRUTE_FORCE, { shields: ['block'] });
    expect(second.body).toMatchObject({ shields: ['block'], mode: 'count_per_identifier', max_attempts: 5 });
    expect((await call('GET', BRUTE_FORCE)).body).toEqual(second.body);
    const stored = await findTenantById(server.server.prepared.store.db, tenantId());
    expect(stored!.settings.attack_protection?.brute_force_protection).toEqual(second.body);
    // The login path reads the new settings at once on this node.
    expect((await server.server.services.attackProtection.settings(tenantId())).brute_force_protection.max_attempts).toBe(5);
    await call('PATCH', BRUTE_FORCE, { mode: 'count_per_identifier_and_ip', shields: ['block', 'user_notification'], allowlist: [], max_attempts: 5 });
  });

  it('lifts the brute-force blocks when the threshold is raised, and keeps them when it is lowered', async () => {
    const db = server.server.prepared.store.db;
    const now = Date.now();
    const block = { tenant_id: tenantId(), user_id: null, identifier: 'locked@example.com', ip: '10.1.1.1', created_at: now, expires_at: now + 60_000 };
    await insertUserBlock(db, block);
    await call('PATCH', BRUTE_FORCE, { max_attempts: 3 });
    expect(await listUserBlocks(db, tenantId(), { identifier: 'locked@example.com' })).toHaveLength(1);
    await call('PATCH', BRUTE_FORCE, { max_attempts: 10 });
    expect(await listUserBlocks(db, tenantId(), { identifier: 'locked@example.com' })).toHaveLength(0);
  });

  it('merges breached-password stages one by one', async () => {
    const res = await call('PATCH', BREACHED, {
      shields: ['block', 'admin_notification'],
      admin_notification_frequency: ['daily'],
      method: 'enhanced',
      stage: { 'pre-change-password': { shields: [] } },
    });
    expect(res).toEqual({
      status: 200,
      body: {
        enabled: true,
        shields: ['block', 'admin_notification'],
        admin_notification_frequency: ['daily'],
        method: 'enhanced',
        stage: { 'pre-user-registration': { shields: ['block'] }, 'pre-change-password': { shields: [] } },
      },
    });
    expect((await call('GET', BREACHED)).body).toEqual(res.body);
    expect((await call('PATCH', BREACHED, { enabled: false })).body).toMatchObject({ enabled: false, method: 'enhanced' });
    await call('PATCH', BREACHED, { enabled: true, shields: ['block'], admin_notification_frequency: [], method: 'standard', stage: { 'pre-change-password': { shields: ['block'] } } });
  });

  it('merges suspicious-IP stages field by field, and needs both fields for a stage never set', async () => {
    const res = await call('PATCH', SUSPICIOUS, { allowlist: ['192.168.0.0/16'], stage: { 'pre-login': { max_attempts: 20 } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      allowlist: ['192.168.0.0/16'],
      stage: { 'pre-login': { max_attempts: 20, rate: 864000 }, 'pre-user-registration': { max_attempts: 50, rate: 1728000 } },
    });
    const half = await call('PATCH', SUSPICIOUS, { stage: { 'pre-custom-token-exchange': { max_attempts: 5 } } });
    expect(half.status).toBe(400);
    expect(half.body).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.stringContaining('pre-custom-token-exchange') });
    const full = await call('PATCH', SUSPICIOUS, { stage: { 'pre-custom-token-exchange': { max_attempts: 5, rate: 60000 } } });
    expect(full.body).toMatchObject({ stage: { 'pre-custom-token-exchange': { max_attempts: 5, rate: 60000 }, 'pre-login': { max_attempts: 20 } } });
  });

  it.each([
    [BRUTE_FORCE, { max_attempts: 0 }],
    [BRUTE_FORCE, { max_attempts: 101 }],
    [BRUTE_FORCE, { max_attempts: 2.5 }],
    [BRUTE_FORCE, { mode: 'count_per_ip' }],
    [BRUTE_FORCE, { shields: ['admin_notification'] }],
    [BRUTE_FORCE, { shields: ['block', 'block'] }],
    [BRUTE_FORCE, { allowlist: ['not-an-ip'] }],
    [BRUTE_FORCE, { allowlist: ['10.0.0.0/33'] }],
    [BRUTE_FORCE, { allowlist: Array.from({ length: 101 }, (_, i) => `10.0.0.${i % 250}`) }],
    [BRUTE_FORCE, { enabled: 'yes' }],
    [BRUTE_FORCE, { unknown: true }],
    [BREACHED, { method: 'psychic' }],
    [BREACHED, { shields: ['notify'] }],
    [BREACHED, { admin_notification_frequency: ['hourly'] }],
    [BREACHED, { stage: { 'pre-user-registration': { shields: ['user_notification'] } } }],
    [BREACHED, { stage: { 'post-login': { shields: [] } } }],
    [SUSPICIOUS, { stage: { 'pre-login': { max_attempts: 0, rate: 1000 } } }],
    [SUSPICIOUS, { stage: { 'pre-login': { rate: -1 } } }],
    [SUSPICIOUS, { stage: { 'pre-login': { max_attempts: 10, burst: 3 } } }],
    [SUSPICIOUS, { shields: ['user_notification'] }],
    [SUSPICIOUS, { allowlist: ['1.2.3.4/8/8'] }],
    [SUSPICIOUS, { allowlist: 'not-a-list' }],
  ])('refuses PATCH %s %j with 400 in the management shape', async (path, body) => {
    const before = (await call('GET', path)).body;
    const res = await call('PATCH', path, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.any(String) });
    expect((await call('GET', path)).body).toEqual(before);
  });

  it('answers malformed JSON and a non-object body with 400, never 500', async () => {
    for (const raw of ['{"max_attempts":', '[]', '"text"', 'null']) {
      const res = await call('PATCH', BRUTE_FORCE, undefined, { raw });
      expect(res.status, raw).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400 });
    }
  });

  it('documents the six operations with their scopes in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>> };
    for (const path of [BRUTE_FORCE, BREACHED, SUSPICIOUS]) {
      const item = doc.paths[`/api/v2${path}`]!;
      expect(Object.values(item.get!.security![0]!)[0]).toEqual(['read:attack_protection']);
      expect(Object.values(item.patch!.security![0]!)[0]).toEqual(['update:attack_protection']);
    }
  });

  it('requires read:attack_protection to read and update:attack_protection to change', async () => {
    const reader = await managementToken(server, ['read:attack_protection']);
    const writer = await managementToken(server, ['update:attack_protection']);
    for (const path of [BRUTE_FORCE, BREACHED, SUSPICIOUS]) {
      expect((await call('GET', path, undefined, { token: reader })).status).toBe(200);
      expect((await call('GET', path, undefined, { token: writer })).status).toBe(403);
      expect((await call('PATCH', path, { enabled: true }, { token: reader })).status).toBe(403);
      expect((await call('PATCH', path, { enabled: true }, { token: writer })).status).toBe(200);
    }
  });
});

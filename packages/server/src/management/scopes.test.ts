/**
 * The scope catalogue and its use: every Management API operation, as the OpenAPI document lists it, refuses
 * a token without its scopes (403 naming them) and accepts a token with any single one of them.
 */
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../store/tenants.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { isCurrentUserScope } from './authenticate.js';
import { NOT_OFFERED } from './not-offered.js';
import { MANAGEMENT_SCOPES } from './scopes.js';

const notOfferedWrites = new Set(NOT_OFFERED.flatMap((feature) => feature.writes.map((w) => `${w.method} ${w.path.replace(/:(\w+)/g, '{$1}')}`)));

interface Operation {
  method: string;
  path: string;
  scopes: string[];
}

const USER_ID = 'auth0|0123456789abcdef01234567';

describe('the scope catalogue', () => {
  it('is exactly the 244 scopes of the contract', () => {
    expect(MANAGEMENT_SCOPES).toHaveLength(244);
    expect(new Set(MANAGEMENT_SCOPES).size).toBe(244);
    for (const scope of MANAGEMENT_SCOPES) expect(scope).toMatch(/^(create|read|update|delete):[a-z_]+$/);
    const contract = path.resolve('../shared/spec/management-scopes.json');
    if (existsSync(contract)) {
      expect([...MANAGEMENT_SCOPES].sort()).toEqual((JSON.parse(readFileSync(contract, 'utf8')) as { scopes: string[] }).scopes.sort());
    }
  });
});

describe('every Management API operation', () => {
  let server: TestServer;
  let operations: Operation[];

  beforeAll(async () => {
    server = await startTestServer();
    const { tenant } = server.server.prepared.bootstrap!;
    // Hundreds of calls follow; lift the per-client limit so the test measures scopes, not the limiter.
    await updateTenant(server.server.prepared.store.db, tenant.id, {
      settings: { ...tenant.settings, rate_limits: { management: { capacity: 100_000, per_second: 100_000 } } },
    });
    const document = (await (await fetch(`${server.url}/api/v2/openapi.json`)).json()) as {
      openapi: string;
      info: { version: string };
      servers: { url: string }[];
      paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
    };
    expect(document).toMatchObject({ openapi: '3.1.0', info: { version: '2.0' }, servers: [{ url: `${server.url}/api/v2` }] });
    // Every operation but the public document itself (`security: []`).
    operations = Object.entries(document.paths).flatMap(([p, item]) =>
      Object.entries(item)
        .filter(([, op]) => op.security?.length !== 0)
        .map(([method, op]) => ({
          method: method.toUpperCase(),
          path: p,
          scopes: Object.values(op.security?.[0] ?? {})[0] ?? [],
        })),
    );
    expect(document.paths['/openapi.json']?.get?.security).toEqual([]);
  });
  afterAll(async () => {
    await server?.close();
  });

  const call = (op: Operation, token: string) =>
    fetch(`${server.url}/api/v2${op.path.replace(/\{id\}/g, encodeURIComponent(USER_ID)).replace(/\{[^}]+\}/g, 'x')}`, {
      method: op.method,
      headers: { authorization: `Bearer ${token}`, ...(['POST', 'PATCH', 'PUT'].includes(op.method) && { 'content-type': 'application/json' }) },
      ...(['POST', 'PATCH', 'PUT'].includes(op.method) && { body: '{}' }),
    });

  /** A token for a user (not a machine), as a single-page app gets for the current_user scopes. */
  async function userToken(scopes: string[]): Promise<string> {
    const { tenant, managementAudience, defaultAppClientId } = server.server.prepared.bootstrap!;
    const key = await server.server.prepared.keyRing.signingKey(tenant.id);
    return new SignJWT({ scope: scopes.join(' '), azp: defaultAppClientId })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .setIssuer(tenant.issuer)
      .setSubject(USER_ID)
      .setAudience(managementAudience)
      .setExpirationTime('1h')
      .sign(key.privateKey);
  }

  it('declares known scopes on every operation', () => {
    expect(operations.length).toBeGreaterThan(0);
    for (const op of operations) {
      expect(op.scopes.length, `${op.method} ${op.path}`).toBeGreaterThan(0);
      for (const scope of op.scopes) expect(MANAGEMENT_SCOPES, `${op.method} ${op.path}`).toContain(scope);
    }
  });

  it('refuses a token without the operation scopes, naming them', async () => {
    for (const op of operations) {
      const unrelated = MANAGEMENT_SCOPES.filter((s) => !op.scopes.includes(s)).slice(0, 3);
      const res = await call(op, await managementToken(server, unrelated));
      expect(res.status, `${op.method} ${op.path}`).toBe(403);
      expect(((await res.json()) as { message: string }).message).toBe(`Insufficient scope, expected any of: ${op.scopes.join(',')}`);
    }
  });

  it('accepts a token with any single one of the operation scopes', async () => {
    for (const op of operations) {
      for (const scope of op.scopes) {
        const token = isCurrentUserScope(scope) ? await userToken([scope]) : await managementToken(server, [scope]);
        const res = await call(op, token);
        expect([401, 403], `${op.method} ${op.path} with ${scope}: ${res.status}`).not.toContain(res.status);
        // A write to a feature we do not offer is refused as such (501), whatever the scope; nothing else is a 5xx.
        if (notOfferedWrites.has(`${op.method} ${op.path}`)) expect(res.status, `${op.method} ${op.path} with ${scope}`).toBe(501);
        else expect(res.status, `${op.method} ${op.path} with ${scope}`).toBeLessThan(500);
      }
    }
  });
});

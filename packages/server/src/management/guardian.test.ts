/**
 * The MFA Management API over real HTTP: the Guardian policy and factor switches (and honest 501s for what is
 * not offered), and a user's authentication methods, enrollments, recovery code regeneration and reset, with
 * their scopes, 404 shapes and other tenants' users and methods out of reach.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../crypto/ids.js';
import { recoveryCode } from '../mfa/recovery-code.js';
import { totp } from '../mfa/totp.js';
import { insertConnection } from '../store/connections.js';
import { listMfaEnrollments } from '../store/mfa-enrollments.js';
import { insertTenant } from '../store/tenants.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { createUser } from '../test-support/sign-in.js';

type Json = Record<string, unknown>;

describe('Management API: guardian and authentication methods', () => {
  let test: TestServer;
  let token: string;
  let tenantId: string;
  const other = { tenantId: newId.tenant(), userId: 'auth0|0ther0tenant0user000001' };
  let counter = 0;

  const call = async (method: string, path: string, body?: unknown, bearer = token): Promise<{ status: number; body: Json & Json[] }> => {
    const res = await fetch(`${test.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json & Json[] };
  };
  const expectError = async (pending: Promise<{ status: number; body: Json }>, status: number, errorCode: string) => {
    const { status: got, body } = await pending;
    expect({ status: got, body }).toMatchObject({ status, body: { statusCode: status, errorCode } });
  };
  const context = (userId: string, tenant = tenantId) => ({ db: test.server.services.store.db, sealer: test.server.services.sealer, tenantId: tenant, userId, now: Date.now() });
  const newUser = async () => (await createUser(test, `m${Date.now()}${counter++}@example.com`, 'correct horse battery staple 42')).user_id;
  const u = (id: string) => `/users/${encodeURIComponent(id)}`;

  beforeAll(async () => {
    test = await startTestServer();
    token = await managementToken(test);
    tenantId = test.server.prepared.bootstrap!.tenant.id;
    const db = test.server.services.store.db;
    await insertTenant(db, { id: other.tenantId, name: `other-${randomBytes(3).toString('hex')}`, friendlyName: 'Other', baseUrl: 'https://other.example', domains: ['other.example'] });
    const connection = newId.connection();
    await insertConnection(db, { id: connection, tenant_id: other.tenantId, name: 'Username-Password-Authentication', strategy: 'auth0', options: {} }, []);
    const now = Date.now();
    await db
      .insertInto('users')
      .values({
        user_id: other.userId, tenant_id: other.tenantId, connection_id: connection, email: 'other@example.com', email_verified: 0, username: null, phone_number: null, phone_verified: 0,
        password_hash: null, blocked: 0, profile: '{}', user_metadata: '{}', app_metadata: '{}', linked_to: null, logins_count: 0, last_login: null, last_ip: null, last_password_reset: null, created_at: now, updated_at: now,
      })
      .execute();
  });
  afterAll(async () => {
    await test?.close();
  });

  it('lists every factor, switches otp, webauthn-roaming, webauthn-platform and recovery-code, and answers 501 for factors not offered', async () => {
    const factors = await call('GET', '/guardian/factors');
    expect(factors.status).toBe(200);
    expect(factors.body.map((f) => f.name)).toEqual(['push-notification', 'sms', 'email', 'duo', 'otp', 'webauthn-roaming', 'webauthn-platform', 'recovery-code']);
    expect(factors.body.every((f) => f.enabled === false)).toBe(true);
    expect(await call('PUT', '/guardian/factors/otp', { enabled: true })).toEqual({ status: 200, body: { enabled: true } });
    expect(await call('PUT', '/guardian/factors/recovery-code', { enabled: true })).toEqual({ status: 200, body: { enabled: true } });
    const after = await call('GET', '/guardian/factors');
    expect(after.body.filter((f) => f.enabled).map((f) => f.name)).toEqual(['otp', 'recovery-code']);
    await expectError(call('PUT', '/guardian/factors/sms', { enabled: true }), 501, 'not_offered');
    expect(await call('PUT', '/guardian/factors/sms', { enabled: false })).toEqual({ status: 200, body: { enabled: false } });
    await expectError(call('PUT', '/guardian/factors/nope', { enabled: true }), 400, 'invalid_uri');
    await expectError(call('PUT', '/guardian/factors/otp', { enabled: 'yes' }), 400, 'invalid_body');
    await expectError(call('PUT', '/guardian/factors/otp', {}), 400, 'invalid_body');
    expect(await call('PUT', '/guardian/factors/otp', { enabled: false })).toEqual({ status: 200, body: { enabled: false } });
    // WebAuthn: security keys and this device's authenticator are switched like otp.
    expect(await call('PUT', '/guardian/factors/webauthn-roaming', { enabled: true })).toEqual({ status: 200, body: { enabled: true } });
    expect(await call('PUT', '/guardian/factors/webauthn-platform', { enabled: true })).toEqual({ status: 200, body: { enabled: true } });
    expect((await call('GET', '/guardian/factors')).body.filter((f) => f.enabled).map((f) => f.name)).toEqual(['webauthn-roaming', 'webauthn-platform', 'recovery-code']);
    expect(await call('PUT', '/guardian/factors/webauthn-roaming', { enabled: false })).toEqual({ status: 200, body: { enabled: false } });
    expect(await call('PUT', '/guardian/factors/webauthn-platform', { enabled: false })).toEqual({ status: 200, body: { enabled: false } });
  });

  it('sets the policy to all-applications and back, refusing what is not a policy here', async () => {
    expect(await call('GET', '/guardian/policies')).toEqual({ status: 200, body: [] });
    expect(await call('PUT', '/guardian/policies', ['all-applications'])).toEqual({ status: 200, body: ['all-applications'] });
    expect(await call('GET', '/guardian/policies')).toEqual({ status: 200, body: ['all-applications'] });
    await expectError(call('PUT', '/guardian/policies', ['confidence-score']), 501, 'not_offered');
    await expectError(call('PUT', '/guardian/policies', ['sometimes']), 400, 'invalid_body');
    await expectError(call('PUT', '/guardian/policies', { policies: [] }), 400, 'invalid_body');
    expect(await call('PUT', '/guardian/policies', [])).toEqual({ status: 200, body: [] });
  });

  it("lists, gets and deletes a user's methods and enrollments; regenerates the recovery code; resets them all", async () => {
    const userId = await newUser();
    expect(await call('GET', `${u(userId)}/authentication-methods`)).toEqual({ status: 200, body: [] });
    const started = await totp.enroll(context(userId), { issuer: 'G', label: 'u' });
    expect((await call('GET', `${u(userId)}/enrollments`)).body).toEqual([{ id: started.enrollment.id, status: 'pending', type: 'authenticator', auth_method: 'authenticator' }]);

    const regenerated = await call('POST', `${u(userId)}/recovery-code-regeneration`);
    expect(regenerated.status).toBe(200);
    expect(regenerated.body.recovery_code).toMatch(/^[A-Z2-9]{24}$/);
    const methods = await call('GET', `${u(userId)}/authentication-methods`);
    expect(methods.body).toEqual([
      { id: started.enrollment.id, type: 'totp', confirmed: false, created_at: expect.any(String) },
      { id: expect.stringMatching(/^recovery-code\|dev_/), type: 'recovery-code', confirmed: true, created_at: expect.any(String), enrolled_at: expect.any(String) },
    ]);
    // The code returned is the one that works, once; a second regeneration replaces it.
    const [, stored] = await listMfaEnrollments(test.server.services.store.db, tenantId, userId);
    const again = await call('POST', `${u(userId)}/recovery-code-regeneration`);
    expect(again.body.recovery_code).not.toBe(regenerated.body.recovery_code);
    expect(await recoveryCode.verify(context(userId), stored!, regenerated.body.recovery_code as string)).toBe(false);

    const paged = await call('GET', `${u(userId)}/authentication-methods?include_totals=true&per_page=1&page=1`);
    expect(paged.body).toMatchObject({ start: 1, limit: 1, length: 1, total: 2, authenticators: [{ type: 'recovery-code' }] });

    const one = await call('GET', `${u(userId)}/authentication-methods/${encodeURIComponent(started.enrollment.id)}`);
    expect(one).toMatchObject({ status: 200, body: { id: started.enrollment.id, type: 'totp' } });
    expect((await call('DELETE', `${u(userId)}/authentication-methods/${encodeURIComponent(started.enrollment.id)}`)).status).toBe(204);
    await expectError(call('DELETE', `${u(userId)}/authentication-methods/${encodeURIComponent(started.enrollment.id)}`), 404, 'inexistent_authentication_method');
    await expectError(call('GET', `${u(userId)}/authentication-methods/${encodeURIComponent(started.enrollment.id)}`), 404, 'inexistent_authentication_method');
    expect((await call('GET', `${u(userId)}/authentication-methods`)).body).toHaveLength(1);

    expect((await call('DELETE', `${u(userId)}/authenticators`)).status).toBe(204);
    expect((await call('GET', `${u(userId)}/authentication-methods`)).body).toEqual([]);
    await totp.enroll(context(userId), { issuer: 'G', label: 'u' });
    expect((await call('DELETE', `${u(userId)}/authentication-methods`)).status).toBe(204);
    expect((await call('GET', `${u(userId)}/enrollments`)).body).toEqual([]);
  });

  it("never reaches another tenant's user or another user's method, and 404s unknown users", async () => {
    const userId = await newUser();
    const otherUser = await newUser();
    const theirs = await totp.enroll(context(otherUser), { issuer: 'G', label: 'u' });
    await recoveryCode.enroll(context(other.userId, other.tenantId), { issuer: 'G', label: 'u' });
    for (const [method, path] of [
      ['GET', '/authentication-methods'],
      ['DELETE', '/authentication-methods'],
      ['GET', '/enrollments'],
      ['POST', '/recovery-code-regeneration'],
      ['DELETE', '/authenticators'],
    ] as const) {
      await expectError(call(method, `${u(other.userId)}${path}`), 404, 'inexistent_user');
      await expectError(call(method, `${u('auth0|000000000000000000000000')}${path}`), 404, 'inexistent_user');
      await expectError(call(method, `/users/not-a-user-id${path}`), 400, 'invalid_uri');
    }
    const theirPath = `${u(userId)}/authentication-methods/${encodeURIComponent(theirs.enrollment.id)}`;
    await expectError(call('GET', theirPath), 404, 'inexistent_authentication_method');
    await expectError(call('DELETE', theirPath), 404, 'inexistent_authentication_method');
    expect(await listMfaEnrollments(test.server.services.store.db, tenantId, otherUser)).toHaveLength(1);
    expect(await listMfaEnrollments(test.server.services.store.db, other.tenantId, other.userId)).toHaveLength(1);
  });

  it('gets and deletes an enrollment by its id alone (/guardian/enrollments/{id}), only within the tenant', async () => {
    const userId = await newUser();
    const mine = await totp.enroll(context(userId), { issuer: 'G', label: 'u' });
    const byId = `/guardian/enrollments/${encodeURIComponent(mine.enrollment.id)}`;
    expect(await call('GET', byId)).toEqual({ status: 200, body: { id: mine.enrollment.id, status: 'pending', type: 'authenticator', auth_method: 'authenticator' } });
    // Another tenant's enrollment, and a recovery code (not an enrollment in the reference's sense), are not found.
    const theirs = await totp.enroll(context(other.userId, other.tenantId), { issuer: 'G', label: 'u' });
    await expectError(call('GET', `/guardian/enrollments/${encodeURIComponent(theirs.enrollment.id)}`), 404, 'inexistent_enrollment');
    await expectError(call('DELETE', `/guardian/enrollments/${encodeURIComponent(theirs.enrollment.id)}`), 404, 'inexistent_enrollment');
    await recoveryCode.enroll(context(userId), { issuer: 'G', label: 'u' });
    const [, code] = await listMfaEnrollments(test.server.services.store.db, tenantId, userId);
    await expectError(call('DELETE', `/guardian/enrollments/${encodeURIComponent(code!.id)}`), 404, 'inexistent_enrollment');
    for (const [method, scope] of [['GET', 'read:guardian_enrollments'], ['DELETE', 'delete:guardian_enrollments']] as const) {
      await expectError(call(method, byId, undefined, await managementToken(test, ['read:users'])), 403, 'insufficient_scope');
      if (method === 'DELETE') expect((await call(method, byId, undefined, await managementToken(test, [scope]))).status).toBe(204);
      else expect((await call(method, byId, undefined, await managementToken(test, [scope]))).status).toBe(200);
    }
    await expectError(call('GET', byId), 404, 'inexistent_enrollment');
    expect((await listMfaEnrollments(test.server.services.store.db, tenantId, userId)).map((e) => e.type)).toEqual(['recovery-code']);
    expect(await listMfaEnrollments(test.server.services.store.db, other.tenantId, other.userId)).not.toHaveLength(0);
  });

  it('needs the reference scopes for each operation', async () => {
    const userId = await newUser();
    const cases: [string, string, string, unknown?][] = [
      ['GET', '/guardian/factors', 'read:guardian_factors'],
      ['PUT', '/guardian/factors/otp', 'update:guardian_factors', { enabled: false }],
      ['GET', '/guardian/policies', 'read:mfa_policies'],
      ['PUT', '/guardian/policies', 'update:mfa_policies', []],
      ['GET', `${u(userId)}/authentication-methods`, 'read:authentication_methods'],
      ['DELETE', `${u(userId)}/authentication-methods`, 'delete:authentication_methods'],
      ['GET', `${u(userId)}/enrollments`, 'read:users'],
      ['POST', `${u(userId)}/recovery-code-regeneration`, 'update:users'],
      ['DELETE', `${u(userId)}/authenticators`, 'delete:guardian_enrollments'],
    ];
    const unrelated = await managementToken(test, ['read:clients']);
    for (const [method, path, scope, body] of cases) {
      await expectError(call(method, path, body, unrelated), 403, 'insufficient_scope');
      expect((await call(method, path, body, await managementToken(test, [scope]))).status).toBeLessThan(300);
    }
  });
});

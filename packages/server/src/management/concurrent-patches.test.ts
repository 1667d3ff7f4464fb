/**
 * PATCHes that merge into what they read, sent all at once over real HTTP, on both dialects: none is lost
 * (store/concurrent-change.ts). Before the conditional writes, 20 concurrent user_metadata merges on PostgreSQL
 * left one key of 20, and a PATCH wrote back the login count it had read, undoing logins made meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../store/tenants.js';
import { findUser, recordLogin } from '../store/users.js';
import { managementCaller } from '../test-support/management-api.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { createUser } from '../test-support/sign-in.js';

type Json = Record<string, unknown>;
const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
const WRITERS = 20;

describe.each(dialects)('concurrent PATCHes lose nothing (%s)', (dialect) => {
  let test: TestServer;

  const call = managementCaller(() => test);
  /** Sends every change at once, then reads the object back: each change must have landed. */
  const allLand = async (path: string, changes: Json[], read = path) => {
    const answers = await Promise.all(changes.map((change) => call('PATCH', path, change)));
    expect(answers.map((a) => a.status)).toEqual(Array<number>(changes.length).fill(200));
    const after = (await call('GET', read)).body;
    for (const change of changes) expect(after).toMatchObject(change);
    return after;
  };
  const keysOf = (value: unknown) => Object.keys(value as Json).sort();
  const expected = (prefix: string) => Array.from({ length: WRITERS }, (_, i) => `${prefix}${i}`).sort();

  beforeAll(async () => {
    test = await startTestServer({ dialect });
    // Every test is a burst of Management writes: lift this tenant's bucket, so that it measures merges, not 429s.
    const tenant = test.server.prepared.bootstrap!.tenant;
    await updateTenant(test.server.services.store.db, tenant.id, { settings: { ...tenant.settings, rate_limits: { management: { capacity: 100_000, per_second: 100_000 } } } });
    test.server.services.tenants.invalidate();
  });
  afterAll(async () => {
    await test?.close();
  });

  it('user_metadata and app_metadata merges from 20 requests at once all land', async () => {
    const { user_id } = await createUser(test, `merge-${dialect}@example.com`, 'correct horse battery staple 9');
    const path = `/users/${encodeURIComponent(user_id)}`;
    const answers = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) => call('PATCH', path, i % 2 ? { user_metadata: { [`u${i}`]: i } } : { app_metadata: { [`a${i}`]: i }, user_metadata: { [`u${i}`]: i } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array<number>(WRITERS).fill(200));
    const user = (await call('GET', path)).body;
    expect(keysOf(user.user_metadata)).toEqual(expected('u'));
    expect(keysOf(user.app_metadata)).toEqual(expected('a').filter((k) => Number(k.slice(1)) % 2 === 0));
  });

  it('a PATCH leaves alone the columns it did not change: logins counted meanwhile stay counted', async () => {
    const { user_id } = await createUser(test, `logins-${dialect}@example.com`, 'correct horse battery staple 9');
    const db = test.server.services.store.db;
    const tenantId = test.server.prepared.bootstrap!.tenant.id;
    const path = `/users/${encodeURIComponent(user_id)}`;
    await Promise.all([
      ...Array.from({ length: WRITERS }, (_, i) => call('PATCH', path, { given_name: `Name ${i}` })),
      ...Array.from({ length: WRITERS }, () => recordLogin(db, tenantId, user_id, '203.0.113.9')),
    ]);
    expect((await findUser(db, tenantId, user_id))?.logins_count).toBe(WRITERS);
  });

  it('client PATCHes of different fields, and a secret rotation, at once: every change lands', async () => {
    const created = await call('POST', '/clients', { name: `client-${dialect}`, app_type: 'regular_web' });
    expect(created.status).toBe(201);
    const path = `/clients/${String(created.body.client_id)}`;
    const changes: Json[] = [
      { callbacks: ['https://app.example/callback'] },
      { allowed_logout_urls: ['https://app.example/bye'] },
      { web_origins: ['https://app.example'] },
      { description: 'Described' },
      { logo_uri: 'https://app.example/logo.png' },
      { client_metadata: { team: 'blue' } },
    ];
    const [rotated, ...answers] = await Promise.all([call('POST', `${path}/rotate-secret`), ...changes.map((change) => call('PATCH', path, change))]);
    expect([rotated!.status, ...answers.map((a) => a.status)]).toEqual(Array<number>(changes.length + 1).fill(200));
    const client = (await call('GET', path)).body;
    for (const change of changes) expect(client).toMatchObject(change);
    expect(client.client_secret).toBe(rotated!.body.client_secret);
  });

  it('organization metadata merges from 20 requests at once all land', async () => {
    const created = await call('POST', '/organizations', { name: `merge-${dialect}` });
    expect(created.status).toBe(201);
    const answers = await Promise.all(Array.from({ length: WRITERS }, (_, i) => call('PATCH', `/organizations/${String(created.body.id)}`, { metadata: { [`m${i}`]: 'v' } })));
    expect(answers.map((a) => a.status)).toEqual(Array<number>(WRITERS).fill(200));
    expect(keysOf((await call('GET', `/organizations/${String(created.body.id)}`)).body.metadata)).toEqual(expected('m'));
  });

  it('resource server PATCHes of different fields at once: every change lands', async () => {
    const created = await call('POST', '/resource-servers', { identifier: `https://api-${dialect}.example`, name: `api-${dialect}` });
    expect(created.status).toBe(201);
    await allLand(`/resource-servers/${String(created.body.id)}`, [
      { name: `renamed-${dialect}` },
      { token_lifetime: 1234 },
      { allow_offline_access: true },
      { skip_consent_for_verifiable_first_party_clients: false },
      { scopes: [{ value: 'read:x', description: 'x' }] },
      { enforce_policies: true },
    ]);
  });

  it('connection PATCHes of different fields at once: every change lands', async () => {
    const created = await call('POST', '/connections', { name: `conn-${dialect}`, strategy: 'auth0' });
    expect(created.status).toBe(201);
    await allLand(`/connections/${String(created.body.id)}`, [
      { display_name: 'Shown' },
      { metadata: { team: 'blue' } },
      { is_domain_connection: true },
      { show_as_button: true },
      { realms: [`conn-${dialect}`, 'other'] },
    ]);
  });

  it('event stream PATCHes of different fields at once: every change lands', async () => {
    const created = await call('POST', '/event-streams', {
      name: `stream-${dialect}`,
      subscriptions: [{ event_type: 'user.created' }],
      destination: { type: 'webhook', configuration: { webhook_endpoint: 'https://hooks.example.com/gatehouse', webhook_authorization: { method: 'bearer', token: 'tok-secret-1' } } },
    });
    expect(created.status).toBe(201);
    await allLand(`/event-streams/${String(created.body.id)}`, [{ name: `stream2-${dialect}` }, { subscriptions: [{ event_type: 'user.updated' }] }, { status: 'disabled' }]);
  });

  it('attack protection PATCHes of different fields at once: every change lands, in each section', async () => {
    await allLand('/attack-protection/brute-force-protection', [{ shields: ['block'] }, { max_attempts: 7 }, { allowlist: ['10.0.0.1'] }, { mode: 'count_per_identifier' }, { enabled: false }]);
    await allLand('/attack-protection/suspicious-ip-throttling', [{ enabled: false }, { allowlist: ['10.1.1.1'] }, { shields: ['admin_notification'] }]);
    await allLand('/attack-protection/breached-password-detection', [{ enabled: true }, { shields: ['block'] }, { admin_notification_frequency: ['daily'] }, { stage: { 'pre-change-password': { shields: ['block'] } } }]);
  });

  it('role PATCHes of the name and of the description at once: both land', async () => {
    const created = await call('POST', '/roles', { name: `role-${dialect}` });
    expect(created.status).toBe(200);
    await allLand(`/roles/${String(created.body.id)}`, [{ name: `role2-${dialect}` }, { description: 'Described' }]);
  });

  it('client grant PATCHes of different fields at once: every change lands', async () => {
    const audience = `https://granted-${dialect}.example`;
    expect((await call('POST', '/resource-servers', { identifier: audience, scopes: [{ value: 'read:x' }] })).status).toBe(201);
    const client = await call('POST', '/clients', { name: `machine-${dialect}`, app_type: 'non_interactive' });
    const created = await call('POST', '/client-grants', { client_id: client.body.client_id, audience, scope: [] });
    expect(created.status).toBe(201);
    const changes: Json[] = [{ scope: ['read:x'] }, { organization_usage: 'allow' }, { allow_any_organization: true }];
    const answers = await Promise.all(changes.map((change) => call('PATCH', `/client-grants/${String(created.body.id)}`, change)));
    expect(answers.map((a) => a.status)).toEqual(Array<number>(changes.length).fill(200));
    const grants = (await call('GET', `/client-grants?client_id=${String(client.body.client_id)}`)).body as unknown as Json[];
    for (const change of changes) expect(grants[0]).toMatchObject(change);
  });

  it('log stream PATCHes of different fields at once: every change lands', async () => {
    const created = await call('POST', '/log-streams', { name: `logs-${dialect}`, type: 'http', sink: { httpEndpoint: 'http://127.0.0.1:9/logs' } });
    expect(created.status).toBe(200);
    await allLand(`/log-streams/${String(created.body.id)}`, [
      { name: `logs2-${dialect}` },
      { status: 'paused' },
      { isPriority: true },
      { filters: [{ type: 'category', name: 'auth.login.fail' }] },
    ]);
  });

  it('email provider PATCHes of different fields at once: every change lands', async () => {
    const credentials = { smtp_host: '127.0.0.1', smtp_port: 2525, smtp_user: 'mailer' };
    expect((await call('POST', '/emails/provider', { name: 'smtp', default_from_address: 'Acme <no-reply@acme.test>', credentials: { ...credentials, smtp_pass: 'mailer-password-1' }, enabled: true })).status).toBe(201);
    // The password is write-only: sent without it for the same account, it is kept, and never shown.
    await allLand('/emails/provider', [{ enabled: false }, { default_from_address: 'Other <other@acme.test>' }, { credentials: { ...credentials, smtp_port: 2626 } }]);
  });

  it('group PATCHes of the name and of the external id at once: both land', async () => {
    const created = await call('POST', '/groups', { name: `group-${dialect}` });
    expect(created.status).toBe(201);
    await allLand(`/groups/${String(created.body.id)}`, [{ name: `group2-${dialect}` }, { external_id: `ext-${dialect}` }]);
  });

  it('organization connection PATCHes of different settings at once: every change lands', async () => {
    const organization = await call('POST', '/organizations', { name: `org-conns-${dialect}` });
    const connection = await call('POST', '/connections', { name: `org-conn-${dialect}`, strategy: 'auth0' });
    const base = `/organizations/${String(organization.body.id)}/enabled_connections`;
    expect((await call('POST', base, { connection_id: connection.body.id })).status).toBe(201);
    await allLand(`${base}/${String(connection.body.id)}`, [{ assign_membership_on_login: true }, { show_as_button: false }, { is_signup_enabled: true }]);
  });

  it('guardian factor and remember-browser PUTs at once: every change lands', async () => {
    const factors = ['otp', 'webauthn-roaming', 'webauthn-platform', 'recovery-code'];
    const answers = await Promise.all(factors.map((name) => call('PUT', `/guardian/factors/${name}`, { enabled: true })));
    expect(answers.map((a) => a.status)).toEqual(Array<number>(factors.length).fill(200));
    const listed = (await call('GET', '/guardian/factors')).body as unknown as { name: string; enabled: boolean }[];
    expect(listed.filter((f) => f.enabled).map((f) => f.name).sort()).toEqual([...factors].sort());

    const changes: Json[] = [{ display_remember_me_checkbox: false }, { remember_me_default_value: true }, { mfa_session_inactivity_timeout: 7200 }];
    const put = await Promise.all(changes.map((change) => call('PUT', '/guardian/settings', change)));
    expect(put.map((a) => a.status)).toEqual(Array<number>(changes.length).fill(200));
    const settings = (await call('GET', '/guardian/settings')).body;
    for (const change of changes) expect(settings).toMatchObject(change);
  });

  it('email template PATCHes of different fields at once: every change lands, and PUTs at once all answer', async () => {
    const template = { syntax: 'liquid', enabled: true, body: '<p>Hello {{ user.email }}</p><a href="{{ url }}">Confirm</a>', subject: 'Confirm' };
    // Two replacements at once once raced to insert the same row (delete, then insert) and one failed.
    const put = await Promise.all([call('PUT', '/email-templates/verify_email', template), call('PUT', '/email-templates/verify_email', template)]);
    expect(put.map((a) => a.status)).toEqual([200, 200]);
    await allLand('/email-templates/verify_email', [{ subject: 'Please confirm' }, { enabled: false }, { resultUrl: 'https://app.example/done' }, { urlLifetimeInSeconds: 7200 }]);
  });
});

/**
 * Requests that make every documented operation give its documented answers, for http/openapi.test.ts: the
 * fixtures they act on, one example per Management API operation (its success, and the errors that are its own),
 * and the sign-in flows that reach the Authentication API's pages and redirects. Every response goes through
 * global fetch, which the test records (recordResponses) and holds to the documents.
 *
 * A route added later needs an example here: the test names every documented status no request produced.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import { sql } from 'kysely';
import { deflateRawSync } from 'node:zlib';
import { generate as generateTotp } from 'otplib';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signingCertificate } from '../crypto/x509-certificates.js';
import { globalClientId } from '../management/global-client.js';
import { NOT_OFFERED } from '../management/not-offered.js';
import { insertMfaEnrollment } from '../store/mfa-enrollments.js';
import { insertSsoSession } from '../store/sso-sessions.js';
import { insertSamlUpstreamLogout } from '../store/saml-upstream-logout.js';
import { sha256 } from '../login/session.js';
import type { ObservedResponse } from './openapi-conformance.js';
import { managementToken, type TestServer } from './server.js';
import { createApp, createUser, readForm, TestBrowser, type TestApp } from './sign-in.js';
import { saveEmailTemplate } from '../store/email-settings.js';
import type { VersionedTable } from '../store/concurrent-change.js';

export const PASSWORD = 'correct horse battery staple 42';

/** Records every response of `base` that goes through global fetch, body included, until `stop()`. */
export function recordResponses(base: string): { responses: ObservedResponse[]; stop(): void } {
  const original = globalThis.fetch;
  const { port } = new URL(base);
  const responses: ObservedResponse[] = [];
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await original(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.port === port) {
      const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
      responses.push({ method, path: url.pathname, status: response.status, headers: response.headers, body: await response.clone().text() });
    }
    return response;
  };
  return {
    responses,
    stop: () => {
      globalThis.fetch = original;
    },
  };
}

/** A request with headers fetch will not send (Host), recorded like the others. */
export function rawRequest(
  base: string,
  options: { method: string; path: string; headers: Record<string, string>; body?: string },
  into: ObservedResponse[],
): Promise<ObservedResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: url.hostname, port: url.port, method: options.method, path: options.path, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
        const observed = { method: options.method, path: options.path.split('?')[0]!, status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString('utf8') };
        into.push(observed);
        resolve(observed);
      });
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

/**
 * A webhook receiver that refuses deliveries with 400, so that they fail at once (no retries); at `/accept` it
 * takes them.
 */
export async function startRefusingReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => (req.url === '/accept' ? res.writeHead(204).end() : res.writeHead(400).end('no')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

export interface Fixtures {
  test: TestServer;
  token: string;
  app: TestApp;
  m2m: TestApp;
  user: { user_id: string; email: string };
  secondary: { user_id: string; email: string };
  rs: { id: string; identifier: string };
  connection: { id: string; name: string };
  databaseConnection: { id: string; name: string };
  role: { id: string };
  grant: { id: string };
  org: { id: string; name: string };
  orgGroup: { id: string };
  group: { id: string };
  stream: { id: string };
  /** A stream that takes its deliveries: the fixture event is never a failed delivery there. */
  acceptingStream: { id: string };
  failedEventId: string;
  /** A completed users export: its job id, and the path and query of its signed download link. */
  exportJob: { id: string; download: URL };
  /** A tenant log event (the fixtures' own changes wrote it). */
  logId: string;
  /** An http log stream to a receiver that takes its batches. */
  logStream: { id: string };
}

let counter = 0;
export const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}`;

export async function api(f: Pick<Fixtures, 'test' | 'token'>, method: string, path: string, body?: unknown, expected?: number): Promise<Record<string, unknown>> {
  const response = await fetch(`${f.test.url}/api/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${f.token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (expected !== undefined ? response.status !== expected : response.status >= 300) {
    throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  }
  return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
}

export async function createFixtures(test: TestServer, hookUrl: string): Promise<Fixtures> {
  const f = { test, token: await managementToken(test) };
  const connections = (await api(f, 'GET', '/connections')) as unknown as { id: string; name: string }[];
  const databaseConnection = connections.find((c) => c.name === 'Username-Password-Authentication')!;
  const app = await createApp(test, {
    cross_origin_authentication: true,
    cross_origin_loc: 'https://app.example/cross-origin',
    allowed_origins: ['https://app.example'], grant_types: ['authorization_code', 'implicit', 'refresh_token', 'http://auth0.com/oauth/grant-type/password-realm'] });
  const rs = (await api(f, 'POST', '/resource-servers', {
    identifier: 'https://fixture.example/api',
    name: 'Fixture API',
    scopes: [{ value: 'read:things', description: 'Read things' }],
  })) as { id: string; identifier: string };
  const m2m = (await api(f, 'POST', '/clients', { name: 'Fixture m2m', app_type: 'non_interactive', grant_types: ['client_credentials'] })) as unknown as TestApp;
  const grant = (await api(f, 'POST', '/client-grants', { client_id: m2m.client_id, audience: rs.identifier, scope: ['read:things'] })) as { id: string };
  const email = `${unique('user')}@example.com`;
  const user = { ...(await createUser(test, email, PASSWORD)), email };
  const secondaryEmail = `${unique('second')}@example.com`;
  const secondary = { ...(await createUser(test, secondaryEmail, PASSWORD)), email: secondaryEmail };
  const connection = (await api(f, 'POST', '/connections', { name: unique('fixture-db-'), strategy: 'auth0', enabled_clients: [app.client_id] })) as { id: string; name: string };
  const role = (await api(f, 'POST', '/roles', { name: unique('role-') })) as { id: string };
  await api(f, 'POST', `/roles/${role.id}/permissions`, { permissions: [{ resource_server_identifier: rs.identifier, permission_name: 'read:things' }] });
  await api(f, 'POST', `/users/${encodeURIComponent(user.user_id)}/roles`, { roles: [role.id] });
  const org = (await api(f, 'POST', '/organizations', { name: unique('org-') })) as { id: string; name: string };
  await api(f, 'POST', `/organizations/${org.id}/members`, { members: [user.user_id] });
  await api(f, 'POST', `/organizations/${org.id}/enabled_connections`, { connection_id: databaseConnection.id });
  const orgGroup = (await api(f, 'POST', '/groups', { name: unique('org-group-'), organization_id: org.id })) as { id: string };
  const group = (await api(f, 'POST', '/groups', { name: unique('group-') })) as { id: string };
  const stream = (await api(f, 'POST', '/event-streams', {
    name: unique('stream-'),
    subscriptions: [{ event_type: 'user.updated' }],
    destination: { type: 'webhook', configuration: { webhook_endpoint: hookUrl, webhook_authorization: { method: 'bearer', token: 'fixture-token' } } },
  })) as { id: string };
  const acceptingStream = (await api(f, 'POST', '/event-streams', {
    name: unique('accepting-'),
    subscriptions: [{ event_type: 'user.updated' }],
    destination: { type: 'webhook', configuration: { webhook_endpoint: hookUrl.replace(/\/hook$/, '/accept'), webhook_authorization: { method: 'bearer', token: 'fixture-token' } } },
  })) as { id: string };
  // One failed delivery: the receiver refuses with 400, which fails at once.
  await api(f, 'PATCH', `/users/${encodeURIComponent(user.user_id)}`, { user_metadata: { fixture: true } });
  let failedEventId = '';
  for (let i = 0; i < 100 && !failedEventId; i++) {
    const deliveries = (await api(f, 'GET', `/event-streams/${stream.id}/deliveries`)) as unknown as { event?: { id?: string } }[];
    failedEventId = deliveries[0]?.event?.id ?? '';
    if (!failedEventId) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (!failedEventId) throw new Error('no failed delivery recorded for the fixture stream');
  const exportJob = await completedExport(f);
  const logId = await latestLogId(f);
  const logStream = (await api(f, 'POST', '/log-streams', { ...logStreamBody(), sink: { httpEndpoint: hookUrl.replace(/\/hook$/, '/accept') } })) as { id: string };
  return { ...f, app, m2m, user, secondary, rs, connection, databaseConnection, role, grant, org, orgGroup, group, stream, acceptingStream, failedEventId, exportJob, logId, logStream };
}

/** The newest tenant log event's id (the fixtures' own Management API changes wrote some). */
async function latestLogId(f: Pick<Fixtures, 'test' | 'token'>): Promise<string> {
  await f.test.server.services.tenantLogs.flush();
  const [latest] = (await api(f, 'GET', '/logs?per_page=1')) as unknown as { log_id: string }[];
  if (!latest) throw new Error('no tenant log event to read');
  return latest.log_id;
}

/** Waits for a job to finish (the job worker runs in the background). */
export async function finishedJob(f: Pick<Fixtures, 'test' | 'token'>, id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 300; i++) {
    const job = await api(f, 'GET', `/jobs/${id}`);
    if (job.status === 'completed' || job.status === 'failed') return job;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`job ${id} did not finish`);
}

async function completedExport(f: Pick<Fixtures, 'test' | 'token'>): Promise<Fixtures['exportJob']> {
  const job = await api(f, 'POST', '/jobs/users-exports', { format: 'json' });
  const done = await finishedJob(f, job.id as string);
  if (typeof done.location !== 'string') throw new Error(`the export has no download link: ${JSON.stringify(done)}`);
  return { id: done.id as string, download: new URL(done.location) };
}

/** Concrete values for a path template's parameters, from the fixtures. */
export function fillPath(template: string, f: Fixtures): string {
  const values: Record<string, string> = {
    // First, so that a not-offered path under a real resource (/connections/{id}/directory-provisioning) keeps
    // that resource's id from the fixtures below.
    ...notOfferedPathValues(),
    '/api/v2/resource-servers/{id}': f.rs.id,
    '/api/v2/connections/{id}': f.connection.id,
    '/api/v2/users/{id}': f.user.user_id,
    '/api/v2/user-blocks/{id}': f.user.user_id,
    '/api/v2/users/{id}/authentication-methods/{authentication_method_id}': 'totp|dev_0000000000000000',
    '/api/v2/guardian/factors/{name}': 'otp',
    '/api/v2/guardian/enrollments/{id}': 'dev_0000000000000000',
    '/api/v2/clients/{id}': f.app.client_id,
    '/api/v2/client-grants/{id}': f.grant.id,
    '/api/v2/roles/{id}': f.role.id,
    '/api/v2/organizations/{id}': f.org.id,
    '/api/v2/organizations/{id}/client-grants/{grant_id}': 'cgr_notassociated',
    '/api/v2/organizations/name/{name}': f.org.name,
    '/api/v2/organizations/{id}/enabled_connections/{connection_id}': f.databaseConnection.id,
    '/api/v2/organizations/{id}/connections/{connection_id}': f.databaseConnection.id,
    '/api/v2/organizations/{id}/members/{user_id}': f.user.user_id,
    '/api/v2/organizations/{id}/groups/{group_id}': f.orgGroup.id,
    '/api/v2/groups/{id}': f.group.id,
    '/api/v2/event-streams/{id}': f.stream.id,
    '/api/v2/event-streams/{id}/deliveries/{event_id}': f.failedEventId,
    '/api/v2/event-streams/{id}/redeliver/{event_id}': f.failedEventId,
    '/api/v2/sessions/{id}': 'ses_0000000000000000',
    '/api/v2/users/{id}/identities/{provider}': 'auth0',
    '/api/v2/users/{id}/identities/{provider}/{user_id}': f.secondary.user_id.split('|')[1]!,
    '/login/assets/{file}': 'missing.css',
    '/samlp/{clientId}': f.app.client_id,
    '/client/{clientId}.js': f.app.client_id,
    '/samlp/metadata/{clientId}': f.app.client_id,
    '/demo/{asset}': 'app.js',
    '/console/{asset}': 'app.js',
    '/docs/{file}': 'init.js',
    '/dev/mailbox/{id}': 'eml_0000000000000000000000',
    '/api/v2/jobs/{id}': f.exportJob.id,
    '/api/v2/rate-limit-policies/{id}': 'discovery',
    '/api/v2/logs/{id}': f.logId,
    '/api/v2/log-streams/{id}': f.logStream.id,
    // Examples that act on a custom domain make their own; other checks (scopes, auth) stop before the lookup.
    '/api/v2/custom-domains/{id}': 'cd_0000000000000000',
    '/api/v2/email-templates/{templateName}': 'reset_email',
    '/jobs/{id}': f.exportJob.id,
    '/jobs/{id}/{file}': f.exportJob.download.pathname.split('/').pop()!,
    '/api/v2/prompts/{prompt}': 'login',
    '/api/v2/prompts/{prompt}/custom-text/{language}': 'en',
  };
  // Each parameter is named by the path up to it.
  const parts = template.split('/');
  return parts
    .map((part, i) => {
      if (!part.startsWith('{')) return part;
      const value = values[parts.slice(0, i + 1).join('/')];
      if (value === undefined) throw new Error(`no fixture value for ${parts.slice(0, i + 1).join('/')}: add one to fillPath`);
      // Only the parameter: a suffix after it stays (`{clientId}.js`).
      return part.replace(/^\{[^}]+\}/, encodeURIComponent(value));
    })
    .join('/');
}

/** One request of a Management API example: the documented status it must get. */
export interface ManagementExample {
  /** `METHOD /api/v2/template`. */
  operation: string;
  status?: number;
  query?: Record<string, string>;
  body?: (f: Fixtures) => Promise<unknown> | unknown;
  /** A multipart/form-data body instead of JSON. */
  multipart?: (f: Fixtures) => FormData;
  /** Overrides fillPath, e.g. to act on a throwaway resource. */
  path?: (f: Fixtures) => Promise<string> | string;
}

const enc = encodeURIComponent;

/**
 * Makes every update of the `table` rows that `when` picks (SQL over OLD and NEW) change nothing, as if another
 * writer always got there first: the route's conditional write loses every race, and after retryOnConcurrentChange's
 * 30 rounds it answers its 409. A SQLite trigger, as the documents' test runs on SQLite.
 */
async function losingEveryRace(f: Fixtures, table: VersionedTable, when: string): Promise<void> {
  const store = f.test.server.prepared.store;
  if (store.dialect !== 'sqlite') throw new Error('the lost-race examples make their races with a SQLite trigger');
  await sql.raw(`create trigger ${unique('lost_races_')} before update on ${table} when ${when} begin select raise(ignore); end`).execute(store.db);
}

/** `value` as an SQL string literal. */
const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;

/** The marker a lost-race example writes, which its trigger looks for. */
const LOST_RACES = 'lost-races';

/** A new organization with the database connection enabled, whose links always lose their races. */
async function contendedOrganization(f: Fixtures): Promise<string> {
  const { id } = (await api(f, 'POST', '/organizations', { name: unique('lost-races-') })) as { id: string };
  await api(f, 'POST', `/organizations/${id}/enabled_connections`, { connection_id: f.databaseConnection.id });
  await losingEveryRace(f, 'organization_connections', `OLD.organization_id = ${literal(id)}`);
  return id;
}

const organizationGrants = new Map<string, string>();
/** A client grant made for organizations (organization_usage `allow`, or `deny` to be refused), once per usage. */
async function organizationGrant(f: Fixtures, usage: 'allow' | 'deny' = 'allow'): Promise<string> {
  const key = `${f.test.url} ${usage}`;
  const known = organizationGrants.get(key);
  if (known) return known;
  const client = await api(f, 'POST', '/clients', { name: unique('org grant '), app_type: 'non_interactive' });
  const grant = await api(f, 'POST', '/client-grants', { client_id: client.client_id, audience: f.rs.identifier, scope: [], organization_usage: usage });
  organizationGrants.set(key, grant.id as string);
  return grant.id as string;
}

/** A fresh custom domain (pending verification), for examples that change or remove one. */
const throwawayDomain = async (f: Fixtures) =>
  (await api(f, 'POST', '/custom-domains', { domain: `${unique('cd-')}.example.invalid`, type: 'self_managed_certs' })).custom_domain_id as string;
const templateOf = (path: string) => `/api/v2${path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;

/** Not-offered features: each read answers its empty shape, each write a 501 (management/not-offered.ts). */
function notOfferedExamples(): ManagementExample[] {
  return NOT_OFFERED.flatMap((entry) => [
    ...entry.reads.flatMap((read): ManagementExample[] =>
      read.shape.paging === 'none'
        ? [{ operation: `GET ${templateOf(read.path)}`, status: 404 }]
        : [
            { operation: `GET ${templateOf(read.path)}` },
            { operation: `GET ${templateOf(read.path)}`, query: { include_totals: 'true', page: '0', per_page: '100' } },
          ],
    ),
    ...entry.writes.flatMap((write): ManagementExample[] => [
      ...(write.acceptsEmpty ? [{ operation: `${write.method} ${templateOf(write.path)}`, status: 200, body: () => [] }] : []),
      { operation: `${write.method} ${templateOf(write.path)}`, status: 501, body: () => ({ name: 'anything' }) },
    ]),
  ]);
}

/** Any value fills the parameters of a not-offered feature's paths: there is nothing to find. */
function notOfferedPathValues(): Record<string, string> {
  const values: Record<string, string> = {};
  for (const entry of NOT_OFFERED) {
    for (const { path } of [...entry.reads, ...entry.writes]) {
      const parts = templateOf(path).split('/');
      parts.forEach((part, i) => {
        if (part.startsWith('{')) values[parts.slice(0, i + 1).join('/')] = 'not-offered';
      });
    }
  }
  return values;
}

/**
 * One example per Management API operation (its success status), then the errors that are the operation's own.
 * Run in this order; the DELETEs at the end act on throwaway resources or on what nothing later needs.
 */
export const MANAGEMENT_EXAMPLES: ManagementExample[] = [
  { operation: 'GET /api/v2/openapi.json' },
  { operation: 'GET /api/v2/resource-servers' },
  { operation: 'POST /api/v2/resource-servers', body: () => ({ identifier: `https://${unique('api')}.example/`, name: unique('api ') }) },
  { operation: 'POST /api/v2/resource-servers', status: 409, body: (f) => ({ identifier: f.rs.identifier, name: 'again' }) },
  { operation: 'GET /api/v2/resource-servers/{id}' },
  { operation: 'PATCH /api/v2/resource-servers/{id}', body: () => ({ name: 'Fixture API, renamed' }) },
  {
    operation: 'PATCH /api/v2/resource-servers/{id}',
    status: 409,
    body: async (f) => {
      await losingEveryRace(f, 'resource_servers', `NEW.name = ${literal(LOST_RACES)}`);
      return { name: LOST_RACES };
    },
  },
  { operation: 'PATCH /api/v2/resource-servers/{id}', status: 403, body: () => ({ name: 'no' }), path: (f) => `/api/v2/resource-servers/${enc(f.test.server.prepared.bootstrap!.managementAudience)}` },
  { operation: 'GET /api/v2/connections' },
  // Selected fields leave out the others (found by the fuzzing campaign: the list's schema required them).
  { operation: 'GET /api/v2/connections', query: { fields: 'name', include_fields: 'true' } },
  { operation: 'POST /api/v2/connections', body: () => ({ name: unique('db-'), strategy: 'auth0' }) },
  { operation: 'POST /api/v2/connections', status: 409, body: (f) => ({ name: f.connection.name, strategy: 'auth0' }) },
  { operation: 'GET /api/v2/connections/{id}' },
  { operation: 'PATCH /api/v2/connections/{id}', body: () => ({ display_name: 'Fixture DB' }) },
  {
    operation: 'PATCH /api/v2/connections/{id}',
    status: 409,
    body: async (f) => {
      await losingEveryRace(f, 'connections', `instr(NEW.properties, ${literal(LOST_RACES)}) > 0`);
      return { display_name: LOST_RACES };
    },
  },
  { operation: 'GET /api/v2/connections/{id}/clients' },
  { operation: 'PATCH /api/v2/connections/{id}/clients', body: (f) => [{ client_id: f.m2m.client_id, status: true }] },
  { operation: 'GET /api/v2/users' },
  { operation: 'POST /api/v2/users', body: () => ({ connection: 'Username-Password-Authentication', email: `${unique('made')}@example.com`, password: PASSWORD }) },
  { operation: 'POST /api/v2/users', status: 409, body: (f) => ({ connection: 'Username-Password-Authentication', email: f.user.email, password: PASSWORD }) },
  { operation: 'GET /api/v2/users/{id}' },
  { operation: 'PATCH /api/v2/users/{id}', body: () => ({ user_metadata: { theme: 'dark' } }) },
  { operation: 'PATCH /api/v2/users/{id}', status: 409, body: (f) => ({ email: f.secondary.email }) },
  { operation: 'GET /api/v2/users-by-email', query: { email: 'nobody@example.com' } },
  { operation: 'GET /api/v2/user-blocks/{id}' },
  // MFA: the tenant's factors and policy, and a user's second factors.
  { operation: 'GET /api/v2/guardian/factors' },
  { operation: 'PUT /api/v2/guardian/factors/{name}', body: () => ({ enabled: true }) },
  { operation: 'PUT /api/v2/guardian/factors/{name}', status: 501, body: () => ({ enabled: true }), path: () => '/api/v2/guardian/factors/sms' },
  { operation: 'GET /api/v2/guardian/policies' },
  { operation: 'PUT /api/v2/guardian/policies', body: () => [] },
  { operation: 'PUT /api/v2/guardian/policies', status: 501, body: () => ['confidence-score'] },
  { operation: 'GET /api/v2/guardian/settings' },
  { operation: 'PUT /api/v2/guardian/settings', body: () => ({ display_remember_me_checkbox: true, mfa_session_overall_timeout: 2_592_000 }) },
  { operation: 'PUT /api/v2/guardian/settings', status: 400, body: () => ({ mfa_session_inactivity_timeout: 2_592_000, mfa_session_overall_timeout: 86_400 }) },
  { operation: 'POST /api/v2/guardian/enrollments/ticket', body: (f) => ({ user_id: f.user.user_id, send_mail: false }) },
  { operation: 'POST /api/v2/guardian/enrollments/ticket', status: 400, body: (f) => ({ user_id: f.user.user_id, factor: 'email', send_mail: false }) },
  { operation: 'POST /api/v2/guardian/enrollments/ticket', status: 404, body: () => ({ user_id: 'auth0|000000000000000000000000', send_mail: false }) },
  { operation: 'POST /api/v2/guardian/enrollments/ticket', status: 501, body: (f) => ({ user_id: f.user.user_id, factor: 'webauthn-roaming', send_mail: false }) },
  { operation: 'POST /api/v2/users/{id}/multifactor/actions/invalidate-remember-browser' },
  { operation: 'POST /api/v2/users/{id}/multifactor/actions/invalidate-remember-browser', status: 404, path: () => `/api/v2/users/${enc(NO_USER)}/multifactor/actions/invalidate-remember-browser` },
  { operation: 'POST /api/v2/users/{id}/recovery-code-regeneration' },
  { operation: 'POST /api/v2/users/{id}/recovery-code-regeneration', status: 404, path: () => `/api/v2/users/${enc(NO_USER)}/recovery-code-regeneration` },
  { operation: 'GET /api/v2/users/{id}/authentication-methods' },
  { operation: 'GET /api/v2/users/{id}/authentication-methods', status: 404, path: () => `/api/v2/users/${enc(NO_USER)}/authentication-methods` },
  { operation: 'GET /api/v2/users/{id}/authentication-methods/{authentication_method_id}', path: async (f) => `/api/v2/users/${enc(f.user.user_id)}/authentication-methods/${enc(await recoveryCodeMethod(f))}` },
  { operation: 'GET /api/v2/users/{id}/authentication-methods/{authentication_method_id}', status: 404 },
  { operation: 'GET /api/v2/users/{id}/enrollments' },
  { operation: 'GET /api/v2/guardian/enrollments/{id}', path: async (f) => `/api/v2/guardian/enrollments/${enc(await totpEnrollment(f))}` },
  { operation: 'GET /api/v2/guardian/enrollments/{id}', status: 404 },
  { operation: 'GET /api/v2/users/{id}/enrollments', status: 404, path: () => `/api/v2/users/${enc(NO_USER)}/enrollments` },
  { operation: 'GET /api/v2/user-blocks', query: { identifier: 'nobody@example.com' } },
  { operation: 'GET /api/v2/logs' },
  { operation: 'GET /api/v2/logs', query: { q: 'type:sapi', include_totals: 'true', per_page: '5' } },
  { operation: 'GET /api/v2/logs', query: { take: '10' } },
  { operation: 'GET /api/v2/logs', status: 400, query: { q: 'description:anything' } },
  { operation: 'GET /api/v2/logs/{id}' },
  { operation: 'GET /api/v2/log-streams' },
  { operation: 'POST /api/v2/log-streams', body: () => logStreamBody() },
  { operation: 'POST /api/v2/log-streams', status: 409, body: async (f) => ({ ...logStreamBody(), name: (await api(f, 'GET', `/log-streams/${f.logStream.id}`)).name }) },
  { operation: 'POST /api/v2/log-streams', status: 501, body: () => ({ type: 'datadog', sink: { datadogRegion: 'us', datadogApiKey: 'not-a-key' } }) },
  { operation: 'POST /api/v2/log-streams', status: 400, body: () => ({ type: 'http', sink: {} }) },
  { operation: 'GET /api/v2/log-streams/{id}' },
  { operation: 'GET /api/v2/log-streams/{id}', status: 404, path: () => '/api/v2/log-streams/lst_0000000000000000' },
  { operation: 'PATCH /api/v2/log-streams/{id}', body: () => ({ status: 'active', filters: [{ type: 'category', name: 'auth.login.fail' }] }) },
  { operation: 'PATCH /api/v2/log-streams/{id}', status: 404, path: () => '/api/v2/log-streams/lst_0000000000000000', body: () => ({ status: 'paused' }) },
  {
    operation: 'PATCH /api/v2/log-streams/{id}',
    status: 409,
    body: async (f) => ({ name: (await api(f, 'POST', '/log-streams', { ...logStreamBody(), name: unique('taken-') })).name }),
  },
  { operation: 'PATCH /api/v2/log-streams/{id}', status: 501, body: () => ({ pii_config: { log_fields: ['email'] } }) },
  { operation: 'DELETE /api/v2/log-streams/{id}', path: async (f) => `/api/v2/log-streams/${(await api(f, 'POST', '/log-streams', logStreamBody())).id}` },
  { operation: 'DELETE /api/v2/log-streams/{id}', status: 404, path: () => '/api/v2/log-streams/lst_0000000000000000' },
  { operation: 'GET /api/v2/stats/active-users' },
  { operation: 'GET /api/v2/stats/daily', query: { from: '20250101', to: '20250131' } },
  { operation: 'GET /api/v2/stats/daily', status: 400, query: { from: '20250230' } },
  { operation: 'GET /api/v2/logs/{id}', status: 404, path: () => '/api/v2/logs/1' },
  { operation: 'GET /api/v2/users/{id}/logs' },
  { operation: 'GET /api/v2/users/{id}/logs', status: 400, query: { page: '20', per_page: '100' } },
  { operation: 'GET /api/v2/clients' },
  { operation: 'POST /api/v2/clients', body: () => ({ name: unique('client ') }) },
  { operation: 'GET /api/v2/clients/{id}' },
  { operation: 'PATCH /api/v2/clients/{id}', body: () => ({ description: 'The fixture app' }) },
  {
    operation: 'PATCH /api/v2/clients/{id}',
    status: 409,
    body: async (f) => {
      await losingEveryRace(f, 'clients', `NEW.name = ${literal(LOST_RACES)}`);
      return { name: LOST_RACES };
    },
  },
  { operation: 'PATCH /api/v2/clients/{id}', status: 403, body: () => ({ token_endpoint_auth_method: 'none' }), path: (f) => `/api/v2/clients/${f.test.admin.client_id}` },
  { operation: 'POST /api/v2/clients/{id}/rotate-secret', path: (f) => `/api/v2/clients/${f.m2m.client_id}/rotate-secret` },
  {
    operation: 'POST /api/v2/clients/{id}/rotate-secret',
    status: 403,
    path: (f) => `/api/v2/clients/${globalClientId(f.test.server.prepared.bootstrap!.tenant)}/rotate-secret`,
  },
  { operation: 'GET /api/v2/client-grants' },
  { operation: 'POST /api/v2/client-grants', body: async (f) => ({ client_id: (await api(f, 'POST', '/clients', { name: unique('c ') })).client_id, audience: f.rs.identifier, scope: [] }) },
  { operation: 'POST /api/v2/client-grants', status: 409, body: (f) => ({ client_id: f.m2m.client_id, audience: f.rs.identifier, scope: [] }) },
  { operation: 'GET /api/v2/client-grants/{id}' },
  { operation: 'PATCH /api/v2/client-grants/{id}', body: () => ({ scope: ['read:things'] }) },
  {
    operation: 'PATCH /api/v2/client-grants/{id}',
    status: 409,
    body: () => ({ scope: ['read:things'] }),
    path: async (f) => {
      const client = await api(f, 'POST', '/clients', { name: unique('lost-races ') });
      const { id } = (await api(f, 'POST', '/client-grants', { client_id: client.client_id, audience: f.rs.identifier, scope: [] })) as { id: string };
      await losingEveryRace(f, 'client_grants', `OLD.id = ${literal(id)}`);
      return `/api/v2/client-grants/${id}`;
    },
  },
  { operation: 'PATCH /api/v2/client-grants/{id}', status: 403, body: () => ({ scope: [] }), path: (f) => systemGrantPath(f) },
  { operation: 'GET /api/v2/roles' },
  { operation: 'POST /api/v2/roles', body: () => ({ name: unique('role ') }) },
  { operation: 'POST /api/v2/roles', status: 409, body: async (f) => ({ name: (await api(f, 'GET', `/roles/${f.role.id}`)).name }) },
  { operation: 'GET /api/v2/roles/{id}' },
  { operation: 'PATCH /api/v2/roles/{id}', body: () => ({ description: 'The fixture role' }) },
  { operation: 'PATCH /api/v2/roles/{id}', status: 409, body: async (f) => ({ name: (await api(f, 'POST', '/roles', { name: unique('taken ') })).name }) },
  { operation: 'GET /api/v2/roles/{id}/permissions' },
  { operation: 'POST /api/v2/roles/{id}/permissions', body: (f) => ({ permissions: [{ resource_server_identifier: f.rs.identifier, permission_name: 'read:things' }] }) },
  { operation: 'GET /api/v2/roles/{id}/users' },
  { operation: 'POST /api/v2/roles/{id}/users', body: (f) => ({ users: [f.user.user_id] }) },
  { operation: 'GET /api/v2/users/{id}/roles' },
  { operation: 'POST /api/v2/users/{id}/roles', body: (f) => ({ roles: [f.role.id] }) },
  { operation: 'GET /api/v2/users/{id}/permissions' },
  { operation: 'GET /api/v2/users/{id}/sessions', path: async (f) => `/api/v2/users/${enc((await fixtureSession(f)).user_id)}/sessions` },
  { operation: 'GET /api/v2/users/{id}/sessions', status: 404, path: () => `/api/v2/users/${enc(NO_USER)}/sessions` },
  { operation: 'DELETE /api/v2/users/{id}/sessions', path: async (f) => `/api/v2/users/${enc((await fixtureSession(f)).user_id)}/sessions` },
  { operation: 'DELETE /api/v2/users/{id}/sessions', status: 404, path: () => `/api/v2/users/${enc(NO_USER)}/sessions` },
  { operation: 'GET /api/v2/sessions/{id}', path: async (f) => `/api/v2/sessions/${(await fixtureSession(f)).id}` },
  { operation: 'GET /api/v2/sessions/{id}', status: 404 },
  { operation: 'DELETE /api/v2/sessions/{id}', path: async (f) => `/api/v2/sessions/${(await fixtureSession(f)).id}` },
  { operation: 'DELETE /api/v2/sessions/{id}', status: 404 },
  { operation: 'POST /api/v2/sessions/{id}/revoke', path: async (f) => `/api/v2/sessions/${(await fixtureSession(f)).id}/revoke` },
  { operation: 'POST /api/v2/sessions/{id}/revoke', status: 404 },
  { operation: 'GET /api/v2/users/{id}/organizations' },
  { operation: 'GET /api/v2/users/{id}/organizations', status: 404, path: () => `/api/v2/users/${enc(NO_USER)}/organizations` },
  { operation: 'GET /api/v2/organizations' },
  { operation: 'POST /api/v2/organizations', body: () => ({ name: unique('org-') }) },
  { operation: 'POST /api/v2/organizations', status: 409, body: (f) => ({ name: f.org.name }) },
  { operation: 'GET /api/v2/organizations/name/{name}' },
  { operation: 'GET /api/v2/organizations/{id}' },
  { operation: 'PATCH /api/v2/organizations/{id}', body: () => ({ display_name: 'Fixture organization' }) },
  { operation: 'PATCH /api/v2/organizations/{id}', status: 409, body: async (f) => ({ name: (await api(f, 'POST', '/organizations', { name: unique('taken-') })).name }) },
  { operation: 'GET /api/v2/organizations/{id}/members' },
  { operation: 'POST /api/v2/organizations/{id}/members', body: (f) => ({ members: [f.secondary.user_id] }) },
  { operation: 'GET /api/v2/organizations/{id}/members/{user_id}/roles' },
  { operation: 'POST /api/v2/organizations/{id}/members/{user_id}/roles', body: (f) => ({ roles: [f.role.id] }) },
  { operation: 'GET /api/v2/organizations/{id}/enabled_connections' },
  { operation: 'POST /api/v2/organizations/{id}/enabled_connections', body: (f) => ({ connection_id: f.connection.id }) },
  { operation: 'POST /api/v2/organizations/{id}/enabled_connections', status: 409, body: (f) => ({ connection_id: f.databaseConnection.id }) },
  { operation: 'GET /api/v2/organizations/{id}/enabled_connections/{connection_id}' },
  { operation: 'PATCH /api/v2/organizations/{id}/enabled_connections/{connection_id}', body: () => ({ show_as_button: false }) },
  {
    operation: 'PATCH /api/v2/organizations/{id}/enabled_connections/{connection_id}',
    status: 409,
    body: () => ({ show_as_button: false }),
    path: async (f) => `/api/v2/organizations/${await contendedOrganization(f)}/enabled_connections/${f.databaseConnection.id}`,
  },
  { operation: 'GET /api/v2/organizations/{id}/connections' },
  { operation: 'POST /api/v2/organizations/{id}/connections', body: async (f) => ({ connection_id: (await api(f, 'POST', '/connections', { name: unique('oc-'), strategy: 'auth0' })).id }) },
  { operation: 'POST /api/v2/organizations/{id}/connections', status: 409, body: (f) => ({ connection_id: f.databaseConnection.id }) },
  { operation: 'GET /api/v2/organizations/{id}/connections/{connection_id}' },
  { operation: 'PATCH /api/v2/organizations/{id}/connections/{connection_id}', body: () => ({ is_signup_enabled: true }) },
  {
    operation: 'PATCH /api/v2/organizations/{id}/connections/{connection_id}',
    status: 409,
    body: () => ({ is_signup_enabled: true }),
    path: async (f) => `/api/v2/organizations/${await contendedOrganization(f)}/connections/${f.databaseConnection.id}`,
  },
  { operation: 'GET /api/v2/organizations/{id}/client-grants' },
  { operation: 'POST /api/v2/organizations/{id}/client-grants', body: async (f) => ({ grant_id: await organizationGrant(f) }) },
  { operation: 'POST /api/v2/organizations/{id}/client-grants', status: 409, body: async (f) => ({ grant_id: await organizationGrant(f) }) },
  { operation: 'POST /api/v2/organizations/{id}/client-grants', status: 404, body: () => ({ grant_id: 'cgr_doesnotexist' }) },
  { operation: 'POST /api/v2/organizations/{id}/client-grants', status: 400, body: async (f) => ({ grant_id: await organizationGrant(f, 'deny') }) },
  { operation: 'DELETE /api/v2/organizations/{id}/client-grants/{grant_id}', status: 204, path: async (f) => `/api/v2/organizations/${f.org.id}/client-grants/${await organizationGrant(f)}` },
  { operation: 'DELETE /api/v2/organizations/{id}/client-grants/{grant_id}', status: 404 },
  { operation: 'GET /api/v2/organizations/{id}/groups' },
  { operation: 'GET /api/v2/organizations/{id}/groups/{group_id}/roles' },
  { operation: 'POST /api/v2/organizations/{id}/groups/{group_id}/roles', body: (f) => ({ roles: [f.role.id] }) },
  { operation: 'GET /api/v2/groups' },
  { operation: 'GET /api/v2/groups', query: { fields: 'name' } },
  { operation: 'POST /api/v2/groups', body: () => ({ name: unique('group ') }) },
  { operation: 'POST /api/v2/groups', status: 409, body: async (f) => ({ name: (await api(f, 'GET', `/groups/${f.group.id}`)).name }) },
  { operation: 'GET /api/v2/groups/{id}' },
  { operation: 'PATCH /api/v2/groups/{id}', body: () => ({ external_id: 'fixture' }) },
  { operation: 'PATCH /api/v2/groups/{id}', status: 409, body: async (f) => ({ name: (await api(f, 'POST', '/groups', { name: unique('taken ') })).name }) },
  { operation: 'GET /api/v2/groups/{id}/members' },
  { operation: 'POST /api/v2/groups/{id}/members', body: (f) => ({ members: [f.user.user_id] }) },
  { operation: 'GET /api/v2/groups/{id}/roles' },
  { operation: 'POST /api/v2/groups/{id}/roles', body: (f) => ({ roles: [f.role.id] }) },
  { operation: 'GET /api/v2/event-streams' },
  { operation: 'POST /api/v2/event-streams', body: () => streamBody() },
  { operation: 'POST /api/v2/event-streams', status: 409, body: async (f) => ({ ...streamBody(), name: (await api(f, 'GET', `/event-streams/${f.stream.id}`)).name }) },
  { operation: 'GET /api/v2/event-streams/{id}' },
  { operation: 'PATCH /api/v2/event-streams/{id}', status: 409, body: async (f) => ({ name: (await api(f, 'POST', '/event-streams', { ...streamBody(), name: unique('taken-') })).name }) },
  { operation: 'PATCH /api/v2/event-streams/{id}', body: () => ({ name: unique('renamed-') }) },
  { operation: 'GET /api/v2/event-streams/{id}/deliveries' },
  { operation: 'GET /api/v2/event-streams/{id}/deliveries/{event_id}' },
  { operation: 'GET /api/v2/event-streams/{id}/stats' },
  { operation: 'POST /api/v2/event-streams/{id}/test', body: () => ({ event_type: 'user.created' }) },
  { operation: 'POST /api/v2/event-streams/{id}/redeliver/{event_id}' },
  // Only a failed delivery may be redelivered: the same event, delivered (or on its way) to a stream that takes it.
  { operation: 'POST /api/v2/event-streams/{id}/redeliver/{event_id}', status: 409, path: (f) => `/api/v2/event-streams/${f.acceptingStream.id}/redeliver/${f.failedEventId}` },
  { operation: 'POST /api/v2/event-streams/{id}/redeliver', body: () => ({}) },
  { operation: 'POST /api/v2/jobs/users-exports', body: () => ({ format: 'csv', fields: [{ name: 'email' }] }) },
  { operation: 'POST /api/v2/jobs/verification-email', body: (f) => ({ user_id: f.user.user_id }) },
  { operation: 'POST /api/v2/jobs/users-imports', multipart: (f) => usersFile(f, [{ email: `${unique('imported')}@example.com` }]) },
  { operation: 'GET /api/v2/jobs/{id}' },
  { operation: 'GET /api/v2/jobs/{id}/errors', status: 204 },
  { operation: 'GET /api/v2/jobs/{id}/errors', status: 200, path: async (f) => `/api/v2/jobs/${await importWithErrors(f)}/errors` },
  { operation: 'GET /api/v2/tenants/settings' },
  { operation: 'PATCH /api/v2/tenants/settings', body: () => ({ friendly_name: 'Fixture tenant' }) },
  { operation: 'GET /api/v2/rate-limit-policies' },
  { operation: 'GET /api/v2/rate-limit-policies/{id}' },
  { operation: 'GET /api/v2/rate-limit-policies/{id}', status: 404, path: () => '/api/v2/rate-limit-policies/no_such_bucket' },
  { operation: 'PATCH /api/v2/rate-limit-policies/{id}', body: () => ({ capacity: 500, per_second: 100 }) },
  { operation: 'PATCH /api/v2/rate-limit-policies/{id}', status: 404, body: () => ({ capacity: 5 }), path: () => '/api/v2/rate-limit-policies/no_such_bucket' },
  { operation: 'DELETE /api/v2/rate-limit-policies/{id}' },
  { operation: 'DELETE /api/v2/rate-limit-policies/{id}', status: 404, path: () => '/api/v2/rate-limit-policies/no_such_bucket' },
  { operation: 'GET /api/v2/attack-protection/brute-force-protection' },
  { operation: 'PATCH /api/v2/attack-protection/brute-force-protection', body: () => ({ enabled: true }) },
  { operation: 'GET /api/v2/attack-protection/breached-password-detection' },
  { operation: 'PATCH /api/v2/attack-protection/breached-password-detection', body: () => ({ enabled: false }) },
  { operation: 'GET /api/v2/attack-protection/suspicious-ip-throttling' },
  { operation: 'PATCH /api/v2/attack-protection/suspicious-ip-throttling', body: () => ({ enabled: true }) },
  { operation: 'GET /api/v2/branding' },
  { operation: 'PATCH /api/v2/branding', body: () => ({ colors: { primary: '#0f766e', page_background: '#ffffff' }, favicon_url: 'https://cdn.example.com/f.png' }) },
  { operation: 'GET /api/v2/prompts' },
  { operation: 'PATCH /api/v2/prompts', body: () => ({ identifier_first: false }) },
  { operation: 'PATCH /api/v2/prompts', status: 501, body: () => ({ identifier_first: true }) },
  { operation: 'GET /api/v2/prompts/{prompt}/custom-text/{language}', path: () => '/api/v2/prompts/login/custom-text/fr' },
  { operation: 'PUT /api/v2/prompts/{prompt}/custom-text/{language}', path: () => '/api/v2/prompts/login/custom-text/fr', body: () => ({ login: { title: 'Bienvenue' } }) },
  { operation: 'PUT /api/v2/prompts/{prompt}/custom-text/{language}', status: 400, path: () => '/api/v2/prompts/login/custom-text/fr', body: () => ({ login: { unknownKey: 'x' } }) },
  { operation: 'PUT /api/v2/prompts/{prompt}/custom-text/{language}', status: 501, path: () => '/api/v2/prompts/mfa-otp/custom-text/en', body: () => ({}) },
  { operation: 'GET /api/v2/attack-protection/bot-detection' },
  { operation: 'PATCH /api/v2/attack-protection/bot-detection', body: () => ({ challenge_password_policy: 'never' }) },
  { operation: 'PATCH /api/v2/attack-protection/bot-detection', status: 501, body: () => ({ challenge_password_policy: 'always' }) },
  { operation: 'GET /api/v2/attack-protection/captcha' },
  { operation: 'PATCH /api/v2/attack-protection/captcha', body: () => ({}) },
  { operation: 'PATCH /api/v2/attack-protection/captcha', status: 501, body: () => ({ active_provider_id: 'simple_captcha', simple_captcha: {} }) },
  { operation: 'GET /api/v2/supplemental-signals' },
  { operation: 'PATCH /api/v2/supplemental-signals', body: () => ({ akamai_enabled: false }) },
  { operation: 'PATCH /api/v2/supplemental-signals', status: 501, body: () => ({ akamai_enabled: true }) },
  { operation: 'GET /api/v2/risk-assessments/settings' },
  { operation: 'PATCH /api/v2/risk-assessments/settings', body: () => ({ enabled: false }) },
  { operation: 'PATCH /api/v2/risk-assessments/settings', status: 501, body: () => ({ enabled: true }) },
  { operation: 'GET /api/v2/risk-assessments/settings/new-device' },
  { operation: 'PATCH /api/v2/risk-assessments/settings/new-device', body: () => ({ remember_for: 0 }) },
  { operation: 'PATCH /api/v2/risk-assessments/settings/new-device', status: 501, body: () => ({ remember_for: 30 }) },
  // Custom domains: each example acts on a throwaway domain (a `.invalid` name, never resolvable: stays pending).
  { operation: 'GET /api/v2/custom-domains' },
  { operation: 'POST /api/v2/custom-domains', body: () => ({ domain: `${unique('login-')}.example.invalid`, type: 'self_managed_certs' }) },
  { operation: 'POST /api/v2/custom-domains', status: 409, body: (f) => ({ domain: new URL(f.test.url).hostname, type: 'self_managed_certs' }) },
  { operation: 'GET /api/v2/custom-domains/{id}', path: async (f) => `/api/v2/custom-domains/${await throwawayDomain(f)}` },
  { operation: 'GET /api/v2/custom-domains/{id}', status: 404, path: () => '/api/v2/custom-domains/cd_0000000000000000' },
  { operation: 'PATCH /api/v2/custom-domains/{id}', body: () => ({ domain_metadata: { team: 'web' } }), path: async (f) => `/api/v2/custom-domains/${await throwawayDomain(f)}` },
  { operation: 'POST /api/v2/custom-domains/{id}/verify', path: async (f) => `/api/v2/custom-domains/${await throwawayDomain(f)}/verify` },
  { operation: 'DELETE /api/v2/custom-domains/{id}', path: async (f) => `/api/v2/custom-domains/${await throwawayDomain(f)}` },
  // The email provider (disabled, so no flow's email goes to it), from none to one and back to none.
  { operation: 'GET /api/v2/emails/provider', status: 404 },
  { operation: 'PATCH /api/v2/emails/provider', status: 404, body: () => ({ enabled: false }) },
  { operation: 'POST /api/v2/emails/provider', body: () => ({ name: 'smtp', enabled: false, credentials: { smtp_host: '127.0.0.1', smtp_port: 2525, smtp_user: 'u', smtp_pass: 'p' } }) },
  { operation: 'POST /api/v2/emails/provider', status: 409, body: () => ({ name: 'smtp', credentials: { smtp_host: '127.0.0.1', smtp_port: 2525 } }) },
  { operation: 'GET /api/v2/emails/provider' },
  { operation: 'PATCH /api/v2/emails/provider', body: () => ({ default_from_address: 'Fixture <no-reply@fixture.example>' }) },
  {
    operation: 'PATCH /api/v2/emails/provider',
    status: 409,
    body: async (f) => {
      await losingEveryRace(f, 'email_providers', `instr(NEW.default_from_address, ${literal(LOST_RACES)}) > 0`);
      return { default_from_address: `Fixture <${LOST_RACES}@fixture.example>` };
    },
  },
  { operation: 'DELETE /api/v2/emails/provider' },
  { operation: 'DELETE /api/v2/emails/provider', status: 404 },
  // Email templates: reset_email is saved (its link stays in the text part); welcome_email is not sent here.
  { operation: 'GET /api/v2/email-templates/{templateName}', status: 404, path: () => '/api/v2/email-templates/welcome_email' },
  { operation: 'POST /api/v2/email-templates', body: () => ({ template: 'reset_email', body: '<p><a href="{{ url }}">Reset</a></p>', syntax: 'liquid', enabled: true }) },
  { operation: 'POST /api/v2/email-templates', status: 409, body: () => ({ template: 'reset_email', body: '<p>{{ url }}</p>' }) },
  { operation: 'POST /api/v2/email-templates', status: 501, body: () => ({ template: 'welcome_email', body: '<p>Welcome</p>' }) },
  { operation: 'GET /api/v2/email-templates/{templateName}' },
  { operation: 'PATCH /api/v2/email-templates/{templateName}', body: () => ({ subject: 'Reset your {{ friendly_name }} password' }) },
  {
    operation: 'PATCH /api/v2/email-templates/{templateName}',
    status: 409,
    body: async (f) => {
      await losingEveryRace(f, 'email_templates', `NEW.subject = ${literal(LOST_RACES)}`);
      return { subject: LOST_RACES };
    },
  },
  { operation: 'PATCH /api/v2/email-templates/{templateName}', status: 404, body: () => ({ enabled: true }), path: () => '/api/v2/email-templates/verify_email' },
  { operation: 'PATCH /api/v2/email-templates/{templateName}', status: 501, body: () => ({ enabled: true }), path: () => '/api/v2/email-templates/welcome_email' },
  { operation: 'PUT /api/v2/email-templates/{templateName}', body: () => ({ body: '<p><a href="{{ url }}">Choose a new password</a></p>', enabled: true }) },
  { operation: 'PUT /api/v2/email-templates/{templateName}', status: 501, body: () => ({ body: '<p>Welcome</p>' }), path: () => '/api/v2/email-templates/welcome_email' },
  ...notOfferedExamples(),
  // Linking: the secondary becomes an identity of the user, then is unlinked again.
  { operation: 'POST /api/v2/users/{id}/identities', body: (f) => ({ provider: 'auth0', user_id: f.secondary.user_id.split('|')[1] }) },
  { operation: 'POST /api/v2/users/{id}/identities', status: 409, body: (f) => ({ provider: 'auth0', user_id: f.secondary.user_id.split('|')[1] }) },
  { operation: 'DELETE /api/v2/users/{id}/identities/{provider}/{user_id}' },
  // Deletions, last.
  { operation: 'DELETE /api/v2/organizations/{id}/groups/{group_id}/roles', body: (f) => ({ roles: [f.role.id] }) },
  { operation: 'DELETE /api/v2/organizations/{id}/connections/{connection_id}' },
  { operation: 'DELETE /api/v2/organizations/{id}/enabled_connections/{connection_id}', path: (f) => `/api/v2/organizations/${f.org.id}/enabled_connections/${f.connection.id}` },
  { operation: 'DELETE /api/v2/organizations/{id}/members/{user_id}/roles', body: (f) => ({ roles: [f.role.id] }) },
  { operation: 'DELETE /api/v2/organizations/{id}/members', body: (f) => ({ members: [f.secondary.user_id] }) },
  { operation: 'DELETE /api/v2/groups/{id}/members', body: (f) => ({ members: [f.user.user_id] }) },
  { operation: 'DELETE /api/v2/groups/{id}/roles', body: (f) => ({ roles: [f.role.id] }) },
  { operation: 'DELETE /api/v2/users/{id}/roles', body: (f) => ({ roles: [f.role.id] }) },
  { operation: 'DELETE /api/v2/roles/{id}/permissions', body: (f) => ({ permissions: [{ resource_server_identifier: f.rs.identifier, permission_name: 'read:things' }] }) },
  { operation: 'DELETE /api/v2/user-blocks/{id}' },
  { operation: 'DELETE /api/v2/users/{id}/authentication-methods/{authentication_method_id}', path: async (f) => `/api/v2/users/${enc(f.user.user_id)}/authentication-methods/${enc(await recoveryCodeMethod(f))}` },
  { operation: 'DELETE /api/v2/users/{id}/authentication-methods/{authentication_method_id}', status: 404 },
  { operation: 'DELETE /api/v2/users/{id}/authentication-methods' },
  { operation: 'DELETE /api/v2/guardian/enrollments/{id}', path: async (f) => `/api/v2/guardian/enrollments/${enc(await totpEnrollment(f))}` },
  { operation: 'DELETE /api/v2/guardian/enrollments/{id}', status: 404 },
  { operation: 'DELETE /api/v2/users/{id}/authentication-methods', status: 404, path: () => `/api/v2/users/${enc(NO_USER)}/authentication-methods` },
  { operation: 'DELETE /api/v2/users/{id}/authenticators' },
  { operation: 'DELETE /api/v2/users/{id}/authenticators', status: 404, path: () => `/api/v2/users/${enc(NO_USER)}/authenticators` },
  { operation: 'DELETE /api/v2/user-blocks', query: { identifier: 'nobody@example.com' } },
  { operation: 'DELETE /api/v2/client-grants/{id}' },
  { operation: 'DELETE /api/v2/client-grants/{id}', status: 403, path: (f) => systemGrantPath(f) },
  { operation: 'DELETE /api/v2/clients/{id}', path: async (f) => `/api/v2/clients/${(await api(f, 'POST', '/clients', { name: unique('gone ') })).client_id}` },
  { operation: 'DELETE /api/v2/clients/{id}', status: 403, path: (f) => `/api/v2/clients/${f.test.admin.client_id}` },
  { operation: 'DELETE /api/v2/resource-servers/{id}' },
  { operation: 'DELETE /api/v2/resource-servers/{id}', status: 403, path: (f) => `/api/v2/resource-servers/${enc(f.test.server.prepared.bootstrap!.managementAudience)}` },
  { operation: 'DELETE /api/v2/roles/{id}', path: async (f) => `/api/v2/roles/${(await api(f, 'POST', '/roles', { name: unique('gone ') })).id}` },
  { operation: 'DELETE /api/v2/groups/{id}', path: async (f) => `/api/v2/groups/${(await api(f, 'POST', '/groups', { name: unique('gone ') })).id}` },
  { operation: 'DELETE /api/v2/organizations/{id}', path: async (f) => `/api/v2/organizations/${(await api(f, 'POST', '/organizations', { name: unique('gone-') })).id}` },
  { operation: 'DELETE /api/v2/event-streams/{id}' },
  { operation: 'DELETE /api/v2/connections/{id}' },
  { operation: 'DELETE /api/v2/users/{id}', path: (f) => `/api/v2/users/${enc(f.secondary.user_id)}` },
];

/** A user id no user has. */
const NO_USER = 'auth0|000000000000000000000000';

/** A live SSO session of the fixture user, written directly (a session is otherwise made by a browser's login). */
async function fixtureSession(f: Fixtures): Promise<{ id: string; user_id: string }> {
  const id = `ses_${randomBytes(8).toString('hex')}`;
  const now = Date.now();
  await insertSsoSession(f.test.server.prepared.store.db, {
    id, tenant_id: f.test.server.prepared.bootstrap!.tenant.id, token_hash: randomBytes(32).toString('hex'), user_id: f.user.user_id,
    authenticated_at: now, last_active_at: now, idle_expires_at: now + 3_600_000, expires_at: now + 86_400_000, ip: '127.0.0.1', user_agent: 'fixture', created_at: now, amr: '["pwd"]',
  });
  return { id, user_id: f.user.user_id };
}

/** The fixture user's recovery code method (a new one: the regeneration replaces any earlier). */
/** A pending TOTP enrollment of the fixture user, written directly (an enrollment is otherwise made in a browser). */
async function totpEnrollment(f: Fixtures): Promise<string> {
  const id = `dev_${randomBytes(8).toString('hex')}`;
  const now = Date.now();
  await insertMfaEnrollment(f.test.server.prepared.store.db, {
    id, tenantId: f.test.server.prepared.bootstrap!.tenant.id, userId: f.user.user_id, type: 'totp', confirmed: false,
    secretSealed: null, codeHash: null, lastTimeStep: null, createdAt: now, confirmedAt: null, lastAuthAt: null,
  });
  return id;
}

async function recoveryCodeMethod(f: Fixtures): Promise<string> {
  await api(f, 'POST', `/users/${enc(f.user.user_id)}/recovery-code-regeneration`);
  const methods = (await api(f, 'GET', `/users/${enc(f.user.user_id)}/authentication-methods`)) as unknown as { id: string; type: string }[];
  return methods.find((m) => m.type === 'recovery-code')!.id;
}

/** An import's form: the users file (JSON) and the connection. */
function usersFile(f: Fixtures, users: unknown[]): FormData {
  const form = new FormData();
  form.set('connection_id', f.databaseConnection.id);
  form.set('users', new Blob([JSON.stringify(users)], { type: 'application/json' }), 'users.json');
  return form;
}

/** Imports a file with one bad user (multipart, as the reference's clients send it); the finished job's id. */
async function importWithErrors(f: Fixtures): Promise<string> {
  const response = await fetch(`${f.test.url}/api/v2/jobs/users-imports`, { method: 'POST', headers: { authorization: `Bearer ${f.token}` }, body: usersFile(f, [{ email: 'not an email' }]) });
  if (response.status !== 202) throw new Error(`POST /api/v2/jobs/users-imports: ${response.status} ${await response.text()}`);
  const job = (await response.json()) as { id: string };
  await finishedJob(f, job.id);
  return job.id;
}

function logStreamBody(): Record<string, unknown> {
  return { name: unique('log-stream-'), type: 'http', sink: { httpEndpoint: 'http://127.0.0.1:9/logs', httpAuthorization: 'Bearer fixture-log-token', httpContentFormat: 'JSONARRAY' } };
}

function streamBody(): Record<string, unknown> {
  return {
    subscriptions: [{ event_type: 'user.created' }],
    destination: { type: 'webhook', configuration: { webhook_endpoint: 'https://hooks.example/x', webhook_authorization: { method: 'bearer', token: 't' } } },
  };
}

async function systemGrantPath(f: Fixtures): Promise<string> {
  const grants = (await api(f, 'GET', `/client-grants?client_id=${f.test.admin.client_id}`)) as unknown as { id: string }[];
  return `/api/v2/client-grants/${grants[0]!.id}`;
}

export async function runManagementExample(f: Fixtures, example: ManagementExample, documentedSuccess: number): Promise<void> {
  const [method, template] = example.operation.split(' ') as [string, string];
  const path = example.path ? await example.path(f) : fillPath(template, f);
  const body = example.body ? await example.body(f) : undefined;
  const query = example.query ? `?${new URLSearchParams(example.query)}` : '';
  const response = await fetch(`${f.test.url}${path}${query}`, {
    method,
    headers: { authorization: `Bearer ${f.token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    ...(example.multipart && { body: example.multipart(f) }),
  });
  const text = await response.text();
  const expected = example.status ?? documentedSuccess;
  if (response.status !== expected) throw new Error(`${example.operation} (${path}): expected ${expected}, got ${response.status} ${text.slice(0, 300)}`);
}

/** The newest email in the dev mailbox to `to` (that `matches`, if given), as text. */
export async function mailTo(test: TestServer, to: string, matches: (text: string) => boolean = () => true): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const page = await (await fetch(`${test.url}/dev/mailbox`)).text();
    const article = page.split('<article').find((a) => a.includes(`To ${to}`) && matches(a));
    if (article) return article.replace(/&amp;/g, '&');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no email to ${to}`);
}

const linkWith = (text: string, path: string) => {
  const match = new RegExp(`https?://[^\\s"<]*${path.replace(/\//g, '\\/')}[^\\s"<]*`).exec(text);
  if (!match) throw new Error(`no ${path} link in ${text.slice(0, 300)}`);
  return match[0];
};

/**
 * The Authentication API and its pages, through the flows a browser and an application go: each documented
 * success, redirect and page, and the errors that are the endpoint's own.
 */
export async function runAuthenticationFlows(f: Fixtures): Promise<void> {
  const { test } = f;
  const base = test.url;
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${base}${path}`, { headers, redirect: 'manual' });
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const form = (path: string, fields: Record<string, string>) =>
    fetch(`${base}${path}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
  const expectStatus = async (what: string, response: Promise<Response> | Response, status: number): Promise<Response> => {
    const r = await response;
    if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${readable(await r.clone().text())}`);
    return r;
  };
  const clientId = f.app.client_id;
  const authorize = { client_id: clientId, redirect_uri: 'https://app.example/callback', response_type: 'token id_token', nonce: 'n-1', state: 's-1', scope: 'openid profile email' };

  // The landing page (HTML and JSON), discovery, keys, health, documents, the library, the demo.
  await expectStatus('landing page as JSON', get('/', { accept: 'application/json' }), 200);
  for (const path of ['/', '/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/.well-known/jwks.json', '/healthz', '/readyz', '/metrics', '/openapi.json', '/demo', '/demo/', '/demo/app.js', '/demo/config.json', '/docs', '/docs/swagger-ui.css']) {
    await expectStatus(path, get(path), 200);
  }
  const keys = await get('/.well-known/jwks.json');
  await expectStatus('jwks again', get('/.well-known/jwks.json', { 'if-none-match': keys.headers.get('etag') ?? '' }), 304);
  // Metrics answer this machine only (no metrics token here): a request forwarded by an untrusted proxy is refused.
  await expectStatus('metrics, forwarded', get('/metrics', { 'x-forwarded-for': '198.51.100.7' }), 404);
  for (const path of ['/lib/svc.js', '/lib/svc.mjs']) {
    const first = await expectStatus(path, get(path), 200);
    await expectStatus(`${path} again`, get(path, { 'if-none-match': first.headers.get('etag') ?? '' }), 304);
    const versioned = (await get('/openapi.json').then((r) => r.json()) as { paths: Record<string, unknown> }).paths;
    for (const p of Object.keys(versioned).filter((k) => /^\/lib\/[\d.]+\//.test(k) && k.endsWith(path.slice(4)))) await expectStatus(p, get(p), 200);
  }
  const first = new TestBrowser();
  const loginPage = await (await expectStatus('/authorize', first.follow(base, await first.get(`${base}/authorize?${new URLSearchParams(authorize)}`)) as Promise<Response>, 200)).text();
  const asset = /href="(\/login\/assets\/[^"]+)"/.exec(loginPage)?.[1];
  if (!asset) throw new Error('no stylesheet on the login page');
  await expectStatus('asset', get(asset), 200);
  await expectStatus('missing asset', get('/login/assets/missing.css'), 404);
  await expectStatus('missing docs file', get('/docs/missing.js'), 404);
  // The classic-login conventions: the client configuration script and the browser's SSO state.
  await expectStatus('client configuration script', get(`/client/${clientId}.js`), 200);
  await expectStatus('client configuration script, unknown application', get('/client/nope.js'), 404);
  await expectStatus('sso data, no session', get(`/user/ssodata?client_id=${clientId}`), 200);

  // /authorize, the login page, resume, consent, logout.
  await expectStatus('authorize, unknown client', get(`/authorize?${new URLSearchParams({ ...authorize, client_id: 'nope' })}`), 400);
  await expectStatus('authorize by POST, unknown client', form('/authorize', { ...authorize, client_id: 'nope' }), 400);
  await expectStatus('authorize by POST', form('/authorize', authorize), 303);
  await expectStatus('resume, stale state', get('/authorize/resume?state=nope'), 400);
  await expectStatus('login page, stale state', get('/u/login?state=nope'), 400);
  await expectStatus('login form, stale', form('/u/login', { transaction: 'nope', _csrf: 'x', username: 'a', password: 'b' }), 400);
  const browser = new TestBrowser();
  const start = await browser.follow(base, await browser.get(`${base}/authorize?${new URLSearchParams(authorize)}`));
  const page = await (start as Response).text();
  const login = readForm(page, base);
  // Post/redirect/get: a refused form goes back to its page, which shows what went wrong.
  const refused = await expectStatus('wrong password', browser.post(login.action, { ...login.fields, username: f.user.email, password: 'wrong password' }), 303);
  await expectStatus('login page, after a wrong password', browser.get(new URL(refused.headers.get('location')!, base).href), 400);
  // Logging in with form_post ends on the page that posts the response to the application.
  const formPostStart = await browser.follow(base, await browser.get(`${base}/authorize?${new URLSearchParams({ ...authorize, response_mode: 'form_post' })}`));
  const formPostLogin = readForm(await (formPostStart as Response).text(), base);
  const landed = await browser.follow(base, await browser.post(formPostLogin.action, { ...formPostLogin.fields, username: f.user.email, password: PASSWORD }));
  if (landed instanceof URL || landed.status !== 200) throw new Error('a form_post login did not end on the page that posts the response');
  // With the session: form_post answers with a page; query mode redirects to the application.
  await expectStatus('authorize by POST, form_post', browser.post(`${base}/authorize`, { ...authorize, response_mode: 'form_post' }), 200);
  const code = { client_id: clientId, redirect_uri: 'https://app.example/callback', response_type: 'code', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 's-3' };
  await expectStatus('authorize with a session, query', browser.get(`${base}/authorize?${new URLSearchParams(code)}`), 302);
  const signup = await browser.get(`${base}/authorize?${new URLSearchParams({ ...code, prompt: 'login', screen_hint: 'signup' })}`);
  const signupPage = await browser.follow(base, signup);
  const signupForm = readForm(await (signupPage as Response).text(), base);
  await expectStatus('signup page', browser.get(`${base}/u/signup?state=${signupForm.fields.transaction}`), 200);
  await expectStatus('signup page, stale', get('/u/signup?state=nope'), 400);
  const weak = await expectStatus('signup form, weak', browser.post(signupForm.action, { ...signupForm.fields, email: `${unique('s')}@example.com`, password: 'x' }), 303);
  await expectStatus('signup page, after a weak password', browser.get(new URL(weak.headers.get('location')!, base).href), 400);
  await expectStatus('signup form, stale', form('/u/signup', { transaction: 'nope', _csrf: 'x', email: 'a@example.com', password: 'x' }), 400);
  const newEmail = `${unique('signup')}@example.com`;
  const resumed = await expectStatus('signup form', browser.post(signupForm.action, { ...signupForm.fields, email: newEmail, password: PASSWORD }), 303);
  await expectStatus('resume', browser.get(new URL(resumed.headers.get('location')!, base).href), 302);
  await expectStatus('login page', browser.get(`${base}/u/login?state=${signupForm.fields.transaction}`), 400);
  // Consent: a third-party application.
  const thirdParty = await createApp(test, { is_first_party: false, name: 'Third party' });
  const consentStart = await browser.get(`${base}/authorize?${new URLSearchParams({ ...code, client_id: thirdParty.client_id, scope: 'openid profile' })}`);
  const consentPage = await expectStatus('consent page', browser.get(new URL(consentStart.headers.get('location')!, base).href), 200);
  const consentForm = readForm(await consentPage.text(), base);
  await expectStatus('consent page, stale', get('/u/consent?state=nope'), 400);
  await expectStatus('consent accepted', browser.post(consentForm.action, { ...consentForm.fields, decision: 'accept' }), 303);
  const declineStart = await browser.get(`${base}/authorize?${new URLSearchParams({ ...code, client_id: thirdParty.client_id, scope: 'openid email', response_mode: 'form_post' })}`);
  const declinePage = await browser.get(new URL(declineStart.headers.get('location')!, base).href);
  const declineForm = readForm(await declinePage.text(), base);
  await expectStatus('consent declined, form_post', browser.post(declineForm.action, { ...declineForm.fields, decision: 'deny' }), 200);
  await expectStatus('consent form, stale', form('/u/consent', { transaction: 'nope', _csrf: 'x' }), 400);
  // Email verification (the signup's email) and password reset.
  const verification = linkWith(await mailTo(test, newEmail), '/u/email-verification');
  await expectStatus('email verification', get(new URL(verification).pathname + new URL(verification).search), 200);
  await expectStatus('email verification, bad', get('/u/email-verification?ticket=nope'), 400);
  const forgot = await browser.follow(base, await browser.get(`${base}/authorize?${new URLSearchParams({ ...code, prompt: 'login' })}`));
  const forgotState = readForm(await (forgot as Response).text(), base).fields.transaction!;
  const resetPage = await expectStatus('forgot password page', browser.get(`${base}/u/reset-password?state=${forgotState}`), 200);
  const resetForm = readForm(await resetPage.text(), base);
  await expectStatus('forgot password page, stale', get('/u/reset-password?state=nope'), 400);
  const badEmail = await expectStatus('forgot password, bad email', browser.post(resetForm.action, { ...resetForm.fields, email: 'not an email' }), 303);
  await expectStatus('forgot password page, after a bad email', browser.get(new URL(badEmail.headers.get('location')!, base).href), 400);
  const sent = await expectStatus('forgot password', browser.post(resetForm.action, { ...resetForm.fields, email: newEmail }), 303);
  await expectStatus('forgot password page, sent', browser.get(new URL(sent.headers.get('location')!, base).href), 200);
  await expectStatus('forgot password form, stale', form('/u/reset-password', { transaction: 'nope', _csrf: 'x', email: newEmail }), 400);
  const ticketLink = new URL(linkWith(await mailTo(test, newEmail, (text) => text.includes('/u/reset-password/ticket')), '/u/reset-password/ticket'));
  const resetter = new TestBrowser();
  const ticketPage = await expectStatus('reset ticket page', resetter.get(`${base}${ticketLink.pathname}${ticketLink.search}`), 200);
  const ticketForm = readForm(await ticketPage.text(), base);
  const mismatch = await expectStatus('reset ticket, mismatch', resetter.post(`${base}/u/reset-password/ticket`, { ...ticketForm.fields, password: PASSWORD, password_confirmation: 'other' }), 303);
  await expectStatus('reset ticket page, after a mismatch', resetter.get(new URL(mismatch.headers.get('location')!, base).href), 400);
  const changed = await expectStatus('reset ticket', resetter.post(`${base}/u/reset-password/ticket`, { ...ticketForm.fields, password: `${PASSWORD}!`, password_confirmation: `${PASSWORD}!` }), 303);
  await expectStatus('reset ticket page, changed', resetter.get(new URL(changed.headers.get('location')!, base).href), 200);
  await expectStatus('reset ticket, bad', form('/u/reset-password/ticket', { ticket: 'nope', password: PASSWORD, password_confirmation: PASSWORD }), 400);
  await expectStatus('reset ticket page, bad', get('/u/reset-password/ticket?ticket=nope'), 400);
  // The admin console and its first-admin setup link (printed at start while there is no admin).
  await expectStatus('console', get('/console'), 302);
  for (const path of ['/console/', '/console/app.js', '/console/config.json']) await expectStatus(path, get(path), 200);
  await expectStatus('missing console file', get('/console/missing.js'), 404);
  const setup = new URL(test.server.prepared.bootstrap!.console.setupUrl!);
  await expectStatus('console setup page', get(`${setup.pathname}${setup.search}`), 200);
  const setupTicket = setup.searchParams.get('ticket')!;
  await expectStatus('console setup, mismatch', form(setup.pathname, { ticket: setupTicket, email: 'admin@example.com', password: PASSWORD, password_confirmation: 'other' }), 303);
  await expectStatus('console setup, bad', form(setup.pathname, { ticket: 'nope', password: PASSWORD, password_confirmation: PASSWORD }), 400);
  await expectStatus('console setup page, bad', get(`${setup.pathname}?ticket=nope`), 400);
  // With the templates' "Redirect To" (resultUrl), the same two pages send the browser there. The rows are written
  // and removed directly: the Management API examples of email templates expect none saved.
  const db = test.server.prepared.store.db;
  const tenantId = test.server.prepared.bootstrap!.tenant.id;
  const templateRow = (template: string) => ({
    tenant_id: tenantId,
    template,
    body: '<p>{{ url }}</p>',
    from_address: null,
    subject: null,
    result_url: 'https://app.example/done',
    url_lifetime_in_seconds: null,
    include_email_in_redirect: 0,
    enabled: 1,
    created_at: Date.now(),
    updated_at: Date.now(),
  });
  await saveEmailTemplate(db, templateRow('verify_email'));
  await saveEmailTemplate(db, templateRow('reset_email'));
  await expectStatus('email verification, to the resultUrl', get(new URL(verification).pathname + new URL(verification).search), 302);
  await expectStatus('reset ticket page, changed, to the resultUrl', resetter.get(new URL(changed.headers.get('location')!, base).href), 302);
  await db.deleteFrom('email_templates').where('tenant_id', '=', tenantId).execute();
  // A consent page whose session has ended sends the browser back to finish (and so to log in again).
  const unasked = await browser.get(`${base}/authorize?${new URLSearchParams({ ...code, client_id: thirdParty.client_id, scope: 'openid profile email' })}`);
  const unaskedState = new URL(unasked.headers.get('location')!, base).searchParams.get('state')!;
  await expectStatus('logout page', browser.get(`${base}/v2/logout`), 200);
  await expectStatus('consent page without a session', browser.get(`${base}/u/consent?state=${unaskedState}`), 302);
  await expectStatus('logout, returnTo', get(`/v2/logout?client_id=${clientId}&returnTo=${enc('https://app.example/')}`), 302);
  await expectStatus('logout, bad returnTo', get(`/v2/logout?returnTo=${enc('https://evil.example/')}`), 400);
  await expectStatus('oidc logout page', get('/oidc/logout'), 200);
  await expectStatus('oidc logout, redirect', get(`/oidc/logout?client_id=${clientId}&post_logout_redirect_uri=${enc('https://app.example/')}`), 302);
  await expectStatus('oidc logout, bad hint', get('/oidc/logout?id_token_hint=nope'), 400);

  // SAML (auth-api/samlp): metadata, certificates, IdP-initiated sign-in through the login page, single logout.
  const samlApp = await createApp(test, { name: 'SAML fixture', callbacks: ['https://sp.example/acs'], addons: { samlp: { audience: 'https://sp.example', logout: { callback: 'https://sp.example/logout' } } } });
  await expectStatus('saml metadata', get(`/samlp/metadata/${samlApp.client_id}`), 200);
  await expectStatus('saml metadata, unknown application', get('/samlp/metadata/nope'), 400);
  await expectStatus('pem', get('/pem'), 200);
  await expectStatus('cer', get('/cer'), 200);
  await expectStatus('saml sign-in, unknown application', get('/samlp/nope'), 400);
  await expectStatus('saml sign-in by POST, unknown application', form('/samlp/nope', {}), 400);
  await expectStatus('saml sign-in by POST, no session', form(`/samlp/${samlApp.client_id}`, { RelayState: 'r' }), 303);
  const samlBrowser = new TestBrowser();
  const samlLogin = await expectStatus('saml sign-in, no session', samlBrowser.get(`${base}/samlp/${samlApp.client_id}`), 302);
  const samlLoginForm = readForm(await (await samlBrowser.get(new URL(samlLogin.headers.get('location')!, base).href)).text(), base);
  const samlPosted = await samlBrowser.follow(base, await samlBrowser.post(samlLoginForm.action, { ...samlLoginForm.fields, username: f.user.email, password: PASSWORD }));
  if (samlPosted instanceof URL || samlPosted.status !== 200) throw new Error('a SAML login did not end on the page that posts the Response');
  await expectStatus('saml sign-in with a session', samlBrowser.get(`${base}/samlp/${samlApp.client_id}`), 200);
  await expectStatus('saml sign-in by POST', samlBrowser.post(`${base}/samlp/${samlApp.client_id}`, { RelayState: 'r' }), 200);
  const logoutRequest = `<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_${unique('lr')}" Version="2.0" IssueInstant="${new Date().toISOString()}"><saml:Issuer>https://sp.example</saml:Issuer><saml:NameID>${f.user.email}</saml:NameID></samlp:LogoutRequest>`;
  await expectStatus('saml logout', samlBrowser.get(`${base}/samlp/${samlApp.client_id}/logout?SAMLRequest=${enc(deflateRawSync(logoutRequest).toString('base64'))}`), 200);
  const logoutResponse = `<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_${unique('lp')}" Version="2.0" IssueInstant="${new Date().toISOString()}"><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:LogoutResponse>`;
  await expectStatus('saml logout response by POST', form(`/samlp/${samlApp.client_id}/logout`, { SAMLResponse: Buffer.from(logoutResponse).toString('base64') }), 200);
  await expectStatus('saml logout, nothing', get(`/samlp/${samlApp.client_id}/logout`), 400);
  await expectStatus('saml logout by POST, nothing', form(`/samlp/${samlApp.client_id}/logout`, {}), 400);

  // Tokens: client credentials, the password-realm grant, userinfo, revocation.
  const m2mSecret = (await api(f, 'GET', `/clients/${f.m2m.client_id}`)).client_secret as string;
  await expectStatus('token', post('/oauth/token', { grant_type: 'client_credentials', client_id: f.m2m.client_id, client_secret: m2mSecret, audience: f.rs.identifier }), 200);
  await expectStatus('token, bad secret', post('/oauth/token', { grant_type: 'client_credentials', client_id: f.m2m.client_id, client_secret: 'wrong', audience: f.rs.identifier }), 401);
  await expectStatus('token, no grant', post('/oauth/token', { grant_type: 'client_credentials', client_id: f.m2m.client_id, client_secret: m2mSecret, audience: 'https://nowhere.example/' }), 403);
  await expectStatus('token, unsupported grant', post('/oauth/token', { grant_type: 'urn:nope', client_id: f.m2m.client_id }), 400);
  const realm = { grant_type: 'http://auth0.com/oauth/grant-type/password-realm', client_id: clientId, realm: 'Username-Password-Authentication', scope: 'openid offline_access' };
  const tokens = (await (await expectStatus('password realm', post('/oauth/token', { ...realm, username: f.user.email, password: PASSWORD }), 200)).json()) as { access_token: string; refresh_token?: string };
  await expectStatus('userinfo', get('/userinfo', { authorization: `Bearer ${tokens.access_token}` }), 200);
  await expectStatus('userinfo by POST', fetch(`${base}/userinfo`, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` } }), 200);
  await expectStatus('userinfo, no token', get('/userinfo'), 401);
  await expectStatus('userinfo by POST, no token', fetch(`${base}/userinfo`, { method: 'POST' }), 401);
  await expectStatus('revoke', post('/oauth/revoke', { client_id: clientId, token: tokens.refresh_token ?? 'unknown' }), 200);
  await expectStatus('revoke, no token', post('/oauth/revoke', { client_id: clientId }), 400);
  await expectStatus('revoke, bad client', post('/oauth/revoke', { client_id: 'nope', token: 'x' }), 401);
  // Delegation (legacy): a Firebase custom token for a legacy app's user, signed by the add-on's service account.
  const legacyApp = await createApp(test, { name: 'Legacy delegation', grant_types: ['http://auth0.com/oauth/grant-type/password-realm', 'http://auth0.com/oauth/legacy/grant-type/delegation/id_token'] });
  const serviceAccountKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const firebaseApp = await api(f, 'POST', '/clients', { name: 'Firebase project', app_type: 'non_interactive', addons: { firebase: { client_email: 'adminsdk@fixture.iam.gserviceaccount.com', private_key: serviceAccountKey } } });
  const legacyTokens = (await (await expectStatus('password realm, legacy app', post('/oauth/token', { ...realm, client_id: legacyApp.client_id, scope: 'openid', username: f.user.email, password: PASSWORD }), 200)).json()) as { id_token: string };
  const delegation = { client_id: legacyApp.client_id, grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', id_token: legacyTokens.id_token, target: String(firebaseApp.client_id), api_type: 'firebase' };
  await expectStatus('delegation', post('/delegation', delegation), 200);
  await expectStatus('delegation, unknown target', post('/delegation', { ...delegation, target: 'nope' }), 400);
  await expectStatus('delegation, unknown client', post('/delegation', { ...delegation, client_id: 'nope' }), 401);
  await expectStatus('delegation, no legacy grant', post('/delegation', { ...delegation, client_id: clientId }), 403);
  await expectStatus('delegation, api_type app (not offered)', post('/delegation', { ...delegation, api_type: 'app' }), 501);
  // Pushed authorization requests (the SPA is a public client: it pushes with its client_id alone).
  await expectStatus('par', form('/oauth/par', code), 201);
  await expectStatus('par, bad redirect_uri', form('/oauth/par', { ...code, redirect_uri: 'https://evil.example/' }), 400);
  await expectStatus('par, unknown client', form('/oauth/par', { ...code, client_id: 'nope' }), 401);
  // Brute force: ten wrong passwords lock the identifier from this IP (429), and email an unblock link.
  const victim = `${unique('victim')}@example.com`;
  await createUser(test, victim, PASSWORD);
  let locked = false;
  for (let i = 0; i < 12 && !locked; i++) {
    locked = (await post('/oauth/token', { ...realm, username: victim, password: 'wrong' })).status === 429;
  }
  if (!locked) throw new Error('brute-force protection never answered 429');
  const unblock = new URL(linkWith(await mailTo(test, victim), '/u/unblock'));
  await expectStatus('unblock', get(unblock.pathname + unblock.search), 200);
  await expectStatus('unblock, used', get(unblock.pathname + unblock.search), 400);
  // With the blocked_account template's resultUrl, the page's outcome goes there instead (here: the used link's).
  const unblockTenant = test.server.prepared.bootstrap!.tenant.id;
  const savedAt = Date.now();
  await saveEmailTemplate(test.server.prepared.store.db, {
    tenant_id: unblockTenant, template: 'blocked_account', body: '<p>{{ url }}</p>', from_address: null, subject: null, result_url: 'https://app.example/unblocked',
    url_lifetime_in_seconds: null, include_email_in_redirect: 0, enabled: 1, created_at: savedAt, updated_at: savedAt,
  });
  await expectStatus('unblock, used, to the resultUrl', get(unblock.pathname + unblock.search), 302);
  await test.server.prepared.store.db.deleteFrom('email_templates').where('tenant_id', '=', unblockTenant).execute();
  await expectStatus('co/authenticate, locked', postOrigin(base, { client_id: clientId, credential_type: 'http://auth0.com/oauth/grant-type/password-realm', realm: 'Username-Password-Authentication', username: `${unique('nobody')}@example.com`, password: 'x' }), 403);

  // Embedded login: /co/authenticate, then cross-origin verification in a browser without the cookie.
  const co = { client_id: clientId, credential_type: 'http://auth0.com/oauth/grant-type/password-realm', realm: 'Username-Password-Authentication', username: f.user.email, password: `${PASSWORD}` };
  const ticket = (await (await expectStatus('co/authenticate', postOrigin(base, co), 200)).json()) as { login_ticket: string; co_verifier: string };
  await expectStatus('co/authenticate, bad body', postOrigin(base, { client_id: clientId }), 400);
  await expectStatus('co/authenticate, not allowed', postOrigin(base, { ...co, client_id: f.m2m.client_id }), 401);
  await expectStatus('co/authenticate, foreign origin', post('/co/authenticate', co, { origin: 'https://evil.example' }), 403);
  const fresh = new TestBrowser();
  const verificationPage = await expectStatus('authorize with a login ticket', fresh.get(`${base}/authorize?${new URLSearchParams({ ...code, login_ticket: ticket.login_ticket })}`), 200);
  const state = /name="state" value="([^"]+)"/.exec(await verificationPage.text())?.[1] ?? readForm(await verificationPage.clone().text(), base).fields.state;
  await expectStatus('co/verify', fresh.post(`${base}/co/verify`, { state: state!, verifier: ticket.co_verifier }), 303);
  await expectStatus('co/verify, stale', form('/co/verify', { state: 'nope', verifier: 'x' }), 400);
  const ticket2 = (await (await postOrigin(base, co)).json()) as { login_ticket: string; co_verifier: string };
  const fresh2 = new TestBrowser();
  const page2 = await fresh2.get(`${base}/authorize?${new URLSearchParams({ ...code, response_mode: 'form_post', login_ticket: ticket2.login_ticket })}`);
  const state2 = /name="state" value="([^"]+)"/.exec(await page2.text())?.[1];
  await expectStatus('co/verify, form_post', fresh2.post(`${base}/co/verify`, { state: state2!, verifier: ticket2.co_verifier }), 200);

  // Database connections.
  const signupBody = { client_id: clientId, connection: 'Username-Password-Authentication', email: `${unique('db')}@example.com`, password: PASSWORD };
  await expectStatus('dbconnections/signup', post('/dbconnections/signup', signupBody), 200);
  await expectStatus('dbconnections/signup, exists', post('/dbconnections/signup', signupBody), 400);
  await expectStatus('dbconnections/signup, weak', post('/dbconnections/signup', { ...signupBody, email: `${unique('w')}@example.com`, password: 'a' }), 400);
  await expectStatus('dbconnections/signup, origin', post('/dbconnections/signup', signupBody, { origin: 'https://evil.example' }), 403);
  await expectStatus('change_password', post('/dbconnections/change_password', { client_id: clientId, connection: 'Username-Password-Authentication', email: f.user.email }), 200);
  await expectStatus('change_password, no email', post('/dbconnections/change_password', { client_id: clientId, connection: 'Username-Password-Authentication' }), 400);
  await expectStatus('change_password, origin', post('/dbconnections/change_password', { client_id: clientId, connection: 'Username-Password-Authentication', email: f.user.email }, { origin: 'https://evil.example' }), 403);

  // Passwordless by email code: start, verify, verify_redirect.
  await api(f, 'PATCH', `/connections/${(await emailConnection(f)).id}/clients`, [{ client_id: clientId, status: true }]);
  const person = `${unique('pl')}@example.com`;
  await expectStatus('passwordless/start', post('/passwordless/start', { client_id: clientId, connection: 'email', email: person, send: 'code' }), 200);
  await expectStatus('passwordless/start, bad', post('/passwordless/start', { client_id: clientId, connection: 'nope', email: person, send: 'code' }), 400);
  await expectStatus('passwordless/start, bad client', post('/passwordless/start', { client_id: 'nope', connection: 'email', email: person }), 401);
  const otp = /\b(\d{6})\b/.exec(await mailTo(test, person))![1]!;
  await expectStatus('passwordless/verify, wrong', post('/passwordless/verify', { client_id: clientId, connection: 'email', email: person, verification_code: '000000' === otp ? '111111' : '000000' }), 403);
  await expectStatus('passwordless/verify', post('/passwordless/verify', { client_id: clientId, connection: 'email', email: person, verification_code: otp }), 200);
  await expectStatus('passwordless/verify, bad', post('/passwordless/verify', { client_id: clientId, connection: 'nope', email: person, verification_code: otp }), 400);
  await expectStatus('passwordless/verify, bad client', post('/passwordless/verify', { client_id: 'nope', connection: 'email', email: person, verification_code: otp }), 401);
  const redirect = { ...code, connection: 'email', email: person, verification_code: otp };
  await expectStatus('verify_redirect', get(`/passwordless/verify_redirect?${new URLSearchParams(redirect)}`), 302);
  await expectStatus('verify_redirect, dead link', get('/passwordless/verify_redirect?token=nope'), 400);
  const person2 = `${unique('pl')}@example.com`;
  await post('/passwordless/start', { client_id: clientId, connection: 'email', email: person2, send: 'code' });
  const otp2 = /\b(\d{6})\b/.exec(await mailTo(test, person2))![1]!;
  await post('/passwordless/verify', { client_id: clientId, connection: 'email', email: person2, verification_code: otp2 });
  await expectStatus('verify_redirect, wrong code, form_post', get(`/passwordless/verify_redirect?${new URLSearchParams({ ...redirect, email: person2, verification_code: otp2 === '000000' ? '111111' : '000000', response_mode: 'form_post' })}`), 200);

  // A users export's signed download link, and the same link tampered with.
  await expectStatus('export download', get(f.exportJob.download.pathname + f.exportJob.download.search), 200);
  const tampered = new URLSearchParams(f.exportJob.download.search);
  tampered.set('signature', 'x'.repeat(43));
  await expectStatus('export download, bad signature', get(`${f.exportJob.download.pathname}?${tampered}`), 403);

  // MFA's second step (/u/mfa), with the tenant's policy on for the while: enrollment with a code computed from
  // the secret the page shows, a wrong code, the recovery code to keep, stale forms, and the lock after 10.
  await api(f, 'PUT', '/guardian/factors/otp', { enabled: true });
  await api(f, 'PUT', '/guardian/policies', ['all-applications']);
  try {
    const mfaEmail = `${unique('mfa')}@example.com`;
    await createUser(test, mfaEmail, PASSWORD);
    const toSecondStep = async (person: TestBrowser) => {
      const page = await person.follow(base, await person.get(`${base}/authorize?${new URLSearchParams(authorize)}`));
      const login = readForm(await (page as Response).text(), base);
      const step = await expectStatus('login, MFA required', person.post(login.action, { ...login.fields, username: mfaEmail, password: PASSWORD }), 303);
      const url = new URL(step.headers.get('location')!, base).href;
      const shown = await expectStatus('MFA page', person.get(url), 200);
      const text = await shown.text();
      return { url, text, fields: readForm(text, base).fields };
    };
    const person = new TestBrowser();
    const enroll = await toSecondStep(person);
    const secret = /data-secret="([A-Z2-7]+)"/.exec(enroll.text)![1]!;
    const code = await generateTotp({ secret });
    const wrongCode = await expectStatus('MFA, wrong code', person.post(`${base}/u/mfa`, { ...enroll.fields, code: code === '000000' ? '111111' : '000000' }), 303);
    await expectStatus('MFA page, after a wrong code', person.get(new URL(wrongCode.headers.get('location')!, base).href), 400);
    const enrolled = await expectStatus('MFA, enrolled', person.post(`${base}/u/mfa`, { ...enroll.fields, code }), 303);
    await expectStatus('MFA page, recovery code to keep', person.get(new URL(enrolled.headers.get('location')!, base).href), 200);
    await expectStatus('MFA, recovery code kept', person.post(`${base}/u/mfa`, { ...enroll.fields, saved: 'yes' }), 303);
    await expectStatus('MFA page, stale state', get('/u/mfa?state=nope'), 400);
    await expectStatus('MFA form, stale', form('/u/mfa', { transaction: 'nope', _csrf: 'x', code: '123456' }), 400);
    const again = new TestBrowser();
    const challenge = await toSecondStep(again);
    let last = 0;
    for (let i = 0; i < 10; i++) {
      const wrong = await again.post(`${base}/u/mfa`, { ...challenge.fields, code: code === '000000' ? '111111' : '000000' });
      last = (await again.get(new URL(wrong.headers.get('location')!, base).href)).status;
    }
    if (last !== 429) throw new Error(`MFA page after 10 wrong codes: expected 429, got ${last}`);

    // An enrollment ticket's page (/u/mfa-enrollment): the form, a wrong code, enrolled, the used link, a forged
    // one, a form without its CSRF cookie, and the lock after 10 wrong codes.
    const ticketUrl = async () => {
      const owner = await createUser(test, `${unique('ticket')}@example.com`, PASSWORD);
      return new URL((await api(f, 'POST', '/guardian/enrollments/ticket', { user_id: owner.user_id, send_mail: false })).ticket_url as string);
    };
    const holder = new TestBrowser();
    const link = await ticketUrl();
    const ticketPage = await (await expectStatus('MFA enrollment ticket page', holder.get(link.href), 200)).text();
    const ticketForm = readForm(ticketPage, base);
    const ticketCode = await generateTotp({ secret: /data-secret="([A-Z2-7]+)"/.exec(ticketPage)![1]! });
    const wrongTicketCode = await expectStatus('MFA enrollment ticket, wrong code', holder.post(ticketForm.action, { ...ticketForm.fields, code: ticketCode === '000000' ? '111111' : '000000' }), 303);
    await expectStatus('MFA enrollment ticket page, after a wrong code', holder.get(new URL(wrongTicketCode.headers.get('location')!, base).href), 400);
    await expectStatus('MFA enrollment ticket, no CSRF cookie', form('/u/mfa-enrollment', { ...ticketForm.fields, code: ticketCode }), 400);
    await expectStatus('MFA enrollment ticket, enrolled', holder.post(ticketForm.action, { ...ticketForm.fields, code: ticketCode }), 200);
    await expectStatus('MFA enrollment ticket page, used', holder.get(link.href), 400);
    await expectStatus('MFA enrollment ticket page, forged', get('/u/mfa-enrollment?ticket=nope'), 400);
    const locker = new TestBrowser();
    const lockLink = await ticketUrl();
    const lockPage = await (await locker.get(lockLink.href)).text();
    const lockForm = readForm(lockPage, base);
    const lockCode = await generateTotp({ secret: /data-secret="([A-Z2-7]+)"/.exec(lockPage)![1]! });
    let lockedStatus = 0;
    for (let i = 0; i < 10; i++) {
      const wrong = await locker.post(lockForm.action, { ...lockForm.fields, code: lockCode === '000000' ? '111111' : '000000' });
      lockedStatus = (await locker.get(new URL(wrong.headers.get('location')!, base).href)).status;
    }
    if (lockedStatus !== 429) throw new Error(`MFA enrollment ticket page after 10 wrong codes: expected 429, got ${lockedStatus}`);
  } finally {
    await api(f, 'PUT', '/guardian/policies', []);
  }

  // The MFA API (/mfa/*), with the policy and the otp and email factors on for the while, and the MFA grants
  // enabled for the app: associate TOTP on the mfa_token, confirm it, then challenge, down to the email limit.
  await api(f, 'PUT', '/guardian/factors/otp', { enabled: true });
  await api(f, 'PUT', '/guardian/factors/email', { enabled: true });
  await api(f, 'PUT', '/guardian/policies', ['all-applications']);
  const appGrants = ((await api(f, 'GET', `/clients/${clientId}`)).grant_types ?? []) as string[];
  const mfaGrants = ['http://auth0.com/oauth/grant-type/mfa-otp', 'http://auth0.com/oauth/grant-type/mfa-oob'];
  await api(f, 'PATCH', `/clients/${clientId}`, { grant_types: [...new Set([...appGrants, ...mfaGrants])] });
  try {
    const apiEmail = `${unique('mfa-api')}@example.com`;
    await createUser(test, apiEmail, PASSWORD, { email_verified: true });
    const mfaToken = async () => {
      const required = (await (await expectStatus('password realm, MFA required', post('/oauth/token', { ...realm, username: apiEmail, password: PASSWORD }), 403)).json()) as { mfa_token: string };
      return required.mfa_token;
    };
    const first = await mfaToken();
    const bearer = { authorization: `Bearer ${first}` };
    await expectStatus('mfa authenticators', get('/mfa/authenticators', bearer), 200);
    await expectStatus('mfa authenticators, no token', get('/mfa/authenticators'), 401);
    await expectStatus('mfa challenge, not enrolled', post('/mfa/challenge', { client_id: clientId, mfa_token: first, challenge_type: 'otp' }), 400);
    const associated = (await (await expectStatus('mfa associate', post('/mfa/associate', { authenticator_types: ['otp'] }, bearer), 200)).json()) as { secret: string };
    await expectStatus('mfa associate, oob', post('/mfa/associate', { authenticator_types: ['oob'], oob_channels: ['email'] }, bearer), 400);
    await expectStatus('mfa associate, no token', post('/mfa/associate', { authenticator_types: ['otp'] }), 401);
    await expectStatus('mfa-otp grant', post('/oauth/token', { grant_type: mfaGrants[0], client_id: clientId, mfa_token: first, otp: await generateTotp({ secret: associated.secret }) }), 200);
    const second = await mfaToken();
    await expectStatus('mfa associate, enrolled', post('/mfa/associate', { authenticator_types: ['otp'] }, { authorization: `Bearer ${second}` }), 403);
    await expectStatus('mfa challenge', post('/mfa/challenge', { client_id: clientId, mfa_token: second, challenge_type: 'otp' }), 200);
    await expectStatus('mfa challenge, bad client', post('/mfa/challenge', { client_id: 'nope', mfa_token: second }), 401);
    await expectStatus('mfa challenge, bad token', post('/mfa/challenge', { client_id: clientId, mfa_token: 'v1.nope' }), 403);
    for (let i = 0; i < 5; i++) await expectStatus('mfa challenge, email', post('/mfa/challenge', { client_id: clientId, mfa_token: second, challenge_type: 'oob' }), 200);
    await expectStatus('mfa challenge, email limit', post('/mfa/challenge', { client_id: clientId, mfa_token: second, challenge_type: 'oob' }), 429);
  } finally {
    await api(f, 'PUT', '/guardian/policies', []);
    await api(f, 'PATCH', `/clients/${clientId}`, { grant_types: appGrants });
  }

  // Passkeys (/u/passkey), switched on for the while on the database connection: after a password login the page
  // offers one (made in Chromium in login/passkeys.test.ts; here declined), a refused answer, stale forms.
  const database = (await api(f, 'GET', `/connections/${f.databaseConnection.id}`)) as unknown as { options: Record<string, unknown> };
  await api(f, 'PATCH', `/connections/${f.databaseConnection.id}`, { options: { ...database.options, authentication_methods: { password: { enabled: true }, passkey: { enabled: true } } } });
  try {
    const passkeyEmail = `${unique('passkey')}@example.com`;
    await createUser(test, passkeyEmail, PASSWORD);
    const person = new TestBrowser();
    const page = await person.follow(base, await person.get(`${base}/authorize?${new URLSearchParams(authorize)}`));
    const login = readForm(await (page as Response).text(), base);
    const refusedPasskey = await expectStatus('login with a passkey, not one', person.post(login.action, { ...login.fields, webauthn_response: '{}' }), 303);
    await expectStatus('login page, after a refused passkey', person.get(new URL(refusedPasskey.headers.get('location')!, base).href), 400);
    const offered = await expectStatus('login, passkey offered', person.post(login.action, { ...login.fields, username: passkeyEmail, password: PASSWORD }), 303);
    const offer = await expectStatus('passkey page', person.get(new URL(offered.headers.get('location')!, base).href), 200);
    // The page's first form may be "Not now" (skip=yes): the answer goes without it, as the passkey form posts it.
    const { skip: _skip, ...offerFields } = readForm(await offer.text(), base).fields;
    const wrong = await expectStatus('passkey, not one', person.post(`${base}/u/passkey`, { ...offerFields, webauthn_response: '{"id":"x"}' }), 303);
    await expectStatus('passkey page, after a refused answer', person.get(new URL(wrong.headers.get('location')!, base).href), 400);
    await expectStatus('passkey, not now', person.post(`${base}/u/passkey`, { ...offerFields, skip: 'yes' }), 303);
    await expectStatus('passkey page, stale state', get('/u/passkey?state=nope'), 400);
    await expectStatus('passkey form, stale', form('/u/passkey', { transaction: 'nope', _csrf: 'x', skip: 'yes' }), 400);
  } finally {
    await api(f, 'PATCH', `/connections/${f.databaseConnection.id}`, { options: database.options });
  }
  await runFederationFlows(f, expectStatus);

  // The dev mailbox.
  await expectStatus('dev mailbox', get('/dev/mailbox'), 200);
  const emailId = /href="\/dev\/mailbox\/(eml_[A-Za-z0-9]{22})"/.exec(await (await get('/dev/mailbox')).text())?.[1];
  await expectStatus('dev mailbox email', get(`/dev/mailbox/${emailId}`), 200);
  await expectStatus('dev mailbox, no email', get('/dev/mailbox/eml_0000000000000000000000'), 404);
}

type ExpectStatus = (what: string, response: Promise<Response> | Response, status: number) => Promise<Response>;

/**
 * Federation's routes (/login/callback, the login page's buttons), each status from a trip to an upstream that
 * is never visited: an `oauth2` connection builds its authorization URL without a request, so the trip's state
 * can be read from it and answered as the upstream would; an `oidc` connection whose discovery URL refuses
 * connections gives the application `temporarily_unavailable`.
 */
async function runFederationFlows(f: Fixtures, expectStatus: ExpectStatus): Promise<void> {
  const base = f.test.url;
  const app = await createApp(f.test);
  // Nothing listens on the discard port: every request to this upstream is refused at once.
  const upstream = 'http://127.0.0.1:9';
  await api(f, 'POST', '/connections', {
    name: unique('examples-oauth2'),
    strategy: 'oauth2',
    options: { client_id: 'examples', client_secret: 'examples-secret', authorizationURL: `${upstream}/auth`, tokenURL: `${upstream}/token`, userinfoURL: `${upstream}/me` },
    enabled_clients: [app.client_id],
  }, 201).then(async (oauth2) => {
    const down = await api(f, 'POST', '/connections', {
      name: unique('examples-oidc-down'),
      strategy: 'oidc',
      options: { client_id: 'examples', client_secret: 'examples-secret', discovery_url: `${upstream}/.well-known/openid-configuration` },
      enabled_clients: [app.client_id],
    }, 201);
    const request = (mode: 'query' | 'form_post', connection?: unknown) => ({
      client_id: app.client_id,
      redirect_uri: 'https://app.example/callback',
      response_type: 'code',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      response_mode: mode,
      ...(connection !== undefined && { connection: String(connection) }),
    });
    /** A trip to the oauth2 upstream: the browser that left, and the state it carries. */
    const trip = async (mode: 'query' | 'form_post') => {
      const browser = new TestBrowser();
      const leaving = await expectStatus('authorize, to the upstream', browser.get(`${base}/authorize?${new URLSearchParams(request(mode, oauth2.name))}`), 302);
      const state = new URL(leaving.headers.get('location')!).searchParams.get('state')!;
      return { browser, state };
    };
    const denied = { error: 'access_denied', error_description: 'The user said no' };
    let t = await trip('query');
    await expectStatus('callback, upstream refusal', t.browser.get(`${base}/login/callback?${new URLSearchParams({ state: t.state, ...denied })}`), 302);
    await expectStatus('callback, replayed', t.browser.get(`${base}/login/callback?${new URLSearchParams({ state: t.state, ...denied })}`), 400);
    t = await trip('form_post');
    await expectStatus('callback, upstream refusal, form_post', t.browser.get(`${base}/login/callback?${new URLSearchParams({ state: t.state, ...denied })}`), 200);
    t = await trip('query');
    await expectStatus('callback by POST, upstream refusal', t.browser.post(`${base}/login/callback`, { state: t.state, ...denied }), 303);
    t = await trip('form_post');
    await expectStatus('callback by POST, upstream refusal, form_post', t.browser.post(`${base}/login/callback`, { state: t.state, ...denied }), 200);
    await expectStatus('callback by POST, unknown state', t.browser.post(`${base}/login/callback`, { state: 'nope' }), 400);
    // samlp: the SP metadata of a connection, and of a name that is none.
    const idpKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const idpCertificate = await signingCertificate({ kid: unique('examples-idp'), privateKey: idpKey }, 'idp.example');
    const samlp = await api(f, 'POST', '/connections', { name: unique('examples-samlp'), strategy: 'samlp', options: { signInEndpoint: `${upstream}/sso`, signingCert: Buffer.from(idpCertificate).toString('base64') }, enabled_clients: [app.client_id] }, 201);
    await expectStatus('samlp SP metadata', fetch(`${base}/samlp/metadata?connection=${encodeURIComponent(String(samlp.name))}`), 200);
    await expectStatus('samlp SP metadata, unknown connection', fetch(`${base}/samlp/metadata?connection=nope`), 400);
    // /logout, the IdP's answer to a federated SAML logout: pending logouts as /v2/logout?federated leaves them.
    const db = f.test.server.prepared.store.db;
    const { tenant_id } = await db.selectFrom('connections').select('tenant_id').where('id', '=', String(samlp.id)).executeTakeFirstOrThrow();
    const pendingLogout = async (returnTo: string | null) => {
      const relayState = randomBytes(32).toString('base64url');
      const requestId = `_${randomBytes(16).toString('hex')}`;
      await insertSamlUpstreamLogout(db, { id: sha256(relayState), tenant_id, connection_id: String(samlp.id), request_id: requestId, return_to: returnTo, expires_at: Date.now() + 600_000, created_at: Date.now() });
      const xml = `<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_r${requestId}" Version="2.0" IssueInstant="${new Date().toISOString()}" InResponseTo="${requestId}"><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:LogoutResponse>`;
      return { relayState, post: Buffer.from(xml).toString('base64'), redirect: deflateRawSync(Buffer.from(xml)).toString('base64') };
    };
    const sloGet = (fields: Record<string, string>) => fetch(`${base}/logout?${new URLSearchParams(fields)}`, { redirect: 'manual' });
    const sloPost = (fields: Record<string, string>) => fetch(`${base}/logout`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    let answer = await pendingLogout('https://app.example/');
    await expectStatus('SAML logout answer (Redirect), to returnTo', sloGet({ SAMLResponse: answer.redirect, RelayState: answer.relayState }), 302);
    answer = await pendingLogout(null);
    await expectStatus('SAML logout answer (Redirect), logged-out page', sloGet({ SAMLResponse: answer.redirect, RelayState: answer.relayState }), 200);
    await expectStatus('SAML logout answer (Redirect), replayed', sloGet({ SAMLResponse: answer.redirect, RelayState: answer.relayState }), 400);
    await expectStatus('SAML LogoutRequest from the IdP (Redirect)', sloGet({ SAMLRequest: answer.redirect }), 501);
    answer = await pendingLogout('https://app.example/');
    await expectStatus('SAML logout answer (POST), to returnTo', sloPost({ SAMLResponse: answer.post, RelayState: answer.relayState }), 303);
    answer = await pendingLogout(null);
    await expectStatus('SAML logout answer (POST), logged-out page', sloPost({ SAMLResponse: answer.post, RelayState: answer.relayState }), 200);
    await expectStatus('SAML logout answer (POST), replayed', sloPost({ SAMLResponse: answer.post, RelayState: answer.relayState }), 400);
    await expectStatus('SAML LogoutRequest from the IdP (POST)', sloPost({ SAMLRequest: answer.post }), 501);
    // The login page's buttons.
    const browser = new TestBrowser();
    const page = await browser.follow(base, await browser.get(`${base}/authorize?${new URLSearchParams(request('query'))}`));
    const transaction = readForm(await (page as Response).text(), base).fields.transaction!;
    await expectStatus('login button', browser.get(`${base}/u/login/federated?${new URLSearchParams({ state: transaction, connection: String(oauth2.name) })}`), 302);
    await expectStatus('login button, stale', browser.get(`${base}/u/login/federated?${new URLSearchParams({ state: 'nope', connection: String(oauth2.name) })}`), 400);
    const formPost = await browser.follow(base, await browser.get(`${base}/authorize?${new URLSearchParams(request('form_post'))}`));
    const formPostTransaction = readForm(await (formPost as Response).text(), base).fields.transaction!;
    await expectStatus('login button, upstream down', browser.get(`${base}/u/login/federated?${new URLSearchParams({ state: formPostTransaction, connection: String(down.name) })}`), 200);
  });
}

/** A page's text without its markup, for a failure message. */
function readable(body: string): string {
  return body.replace(/<style[\s\S]*?<\/style>/g, '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 400);
}

function postOrigin(base: string, body: unknown): Promise<Response> {
  return fetch(`${base}/co/authenticate`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://app.example' }, body: JSON.stringify(body) });
}

async function emailConnection(f: Fixtures): Promise<{ id: string }> {
  const connections = (await api(f, 'GET', '/connections?strategy=email')) as unknown as { id: string; name: string }[];
  return connections.find((c) => c.name === 'email')!;
}

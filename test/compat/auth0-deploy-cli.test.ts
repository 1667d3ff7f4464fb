/**
 * The unmodified auth0-deploy-cli (npm `auth0-deploy-cli`, through its Node API) against the real server over
 * HTTPS, on SQLite and PostgreSQL: a tenant is built with every resource we support that the tool handles
 * (buildTenant), and `dump` writes all of it as YAML and as a directory, organizations with their client grants.
 * Then `deploy` of the YAML into an empty tenant (a fresh server at the same URL), `dump` again to the same files
 * in both formats, and a second `deploy` (of the directory) that changes nothing the Management API shows.
 * The tool talks to `https://{domain}` only: the server serves the dev certificate, which this process trusts.
 * Nothing is excluded: everything the tool reads is read from us, and what we do not offer reads as empty
 * (management/not-offered.ts). Adding a resource later: create it in buildTenant.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDevCertificate } from '../../packages/server/src/crypto/dev-certificate.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';
import { postgresAvailable } from '../../packages/server/src/test-support/services.js';

type DeployCli = {
  dump(params: { output_folder: string; format: 'yaml' | 'directory'; config: Record<string, unknown> }): Promise<void>;
  deploy(params: { input_file: string; config: Record<string, unknown> }): Promise<void>;
};
const load = createRequire(import.meta.url);
const { dump, deploy } = load('auth0-deploy-cli') as DeployCli;

/**
 * The tool checks what it deploys against its own JSON schema (8 MB, nearly all of it the custom-text shape of
 * every prompt screen) with a fresh Ajv 6 each time: twice per deploy, about 7 s of CPU to compile it each time,
 * which was most of this file's CPU and its long silences between requests. The schema object and the Ajv options
 * are the tool's own constants, so the first compiled validator serves every later check in this process: each
 * deploy is still validated, by the same validator, and nothing else the tool does changes.
 */
type Validator = ((data: unknown) => boolean) & { errors?: unknown };
const toolRequire = createRequire(load.resolve('auth0-deploy-cli'));
const Ajv = toolRequire('ajv/lib/ajv') as { prototype: { validate(schema: unknown, data: unknown): boolean; compile(schema: unknown): Validator } };
const toolSchema = (toolRequire('./tools/auth0/schema') as { default: object }).default;
const ajvValidate = Ajv.prototype.validate;
let toolValidator: Validator | undefined;
Ajv.prototype.validate = function (this: typeof Ajv.prototype & { errors?: unknown }, schema: unknown, data: unknown): boolean {
  if (schema !== toolSchema) return ajvValidate.call(this, schema, data);
  toolValidator ??= this.compile(schema);
  const valid = toolValidator(data);
  this.errors = toolValidator.errors;
  return valid;
};
afterAll(() => {
  Ajv.prototype.validate = ajvValidate;
});

const dialects = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])] as const;

/** Every file under `dir`, by relative path, with its content. */
function readTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string) => {
    for (const name of readdirSync(at).sort()) {
      const full = path.join(at, name);
      if (statSync(full).isDirectory()) walk(full);
      else out[path.relative(dir, full)] = readFileSync(full, 'utf8');
    }
  };
  walk(dir);
  return out;
}

/**
 * A dump as the round trip compares it: "the same files, minus ids". The tool writes no ids (it names what things
 * refer to); the one per-tenant value left is a custom domain's verification record, issued by each tenant for
 * its own claim on the domain, so it is masked.
 */
function withoutIds(tree: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(tree).map(([file, text]) => [file, text.replace(/gatehouse-domain-verification=[A-Za-z0-9]+/g, 'gatehouse-domain-verification=…')]));
}

describe.each(dialects)('auth0-deploy-cli round trip (%s)', (dialect) => {
  let certFile: string;
  let keyFile: string;
  let port: number;
  let server: TestServer | undefined;
  const work = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-deploy-cli-'));
  const out = (name: string) => path.join(work, name);

  async function start(): Promise<TestServer> {
    // A fresh server at the same URL: the dump names the tenant's own API by it.
    await server?.close();
    server = await startTestServer({
      dialect,
      env: { GATEHOUSE_TLS_CERT: certFile, GATEHOUSE_TLS_KEY: keyFile },
      ...(port && { port }),
    });
    port = Number(new URL(server.url).port);
    return server;
  }

  const config = (s: TestServer) => ({
    AUTH0_DOMAIN: new URL(s.url).host,
    AUTH0_CLIENT_ID: s.admin.client_id,
    AUTH0_CLIENT_SECRET: s.admin.client_secret,
  });

  async function api(s: TestServer, method: string, route: string, body?: unknown): Promise<Record<string, unknown>> {
    const token = await (
      await fetch(`${s.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: s.admin.client_id, client_secret: s.admin.client_secret, audience: `${s.url}/api/v2/` }),
      })
    ).json();
    const res = await fetch(`${s.url}/api/v2${route}`, {
      method,
      headers: { authorization: `Bearer ${(token as { access_token: string }).access_token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  }

  /** What the tenant holds, as the Management API reads it (ids included: a change would show). */
  async function snapshot(s: TestServer): Promise<Record<string, unknown>> {
    const read = (route: string) => api(s, 'GET', route);
    const list = async (route: string) => (await read(route)) as unknown as Array<Record<string, string>>;
    const state: Record<string, unknown> = {};
    for (const route of [
      '/clients',
      '/resource-servers',
      '/client-grants',
      '/connections',
      '/roles',
      '/organizations',
      '/tenants/settings',
      '/branding',
      '/prompts',
      '/prompts/login/custom-text/fr',
      '/prompts/signup/custom-text/en',
      '/attack-protection/brute-force-protection',
      '/attack-protection/suspicious-ip-throttling',
      '/attack-protection/breached-password-detection',
      '/custom-domains',
      '/emails/provider',
      '/email-templates/verify_email',
    ]) {
      state[route] = await read(route);
    }
    for (const connection of await list('/connections')) state[`/connections/${connection.id}/clients`] = await read(`/connections/${connection.id}/clients`);
    for (const role of await list('/roles')) state[`/roles/${role.id}/permissions`] = await read(`/roles/${role.id}/permissions`);
    for (const org of await list('/organizations')) {
      state[`/organizations/${org.id}/enabled_connections`] = await read(`/organizations/${org.id}/enabled_connections`);
      state[`/organizations/${org.id}/client-grants`] = await read(`/organizations/${org.id}/client-grants`);
    }
    return state;
  }

  /** Every resource we support that the tool handles, with settings that differ from the defaults. */
  async function buildTenant(s: TestServer): Promise<void> {
    const orders = await api(s, 'POST', '/resource-servers', {
      identifier: 'https://orders.example/',
      name: 'Orders API',
      scopes: [
        { value: 'read:orders', description: 'Read orders' },
        { value: 'write:orders', description: 'Write orders' },
      ],
      token_lifetime: 3600,
      allow_offline_access: true,
    });
    const spa = await api(s, 'POST', '/clients', {
      name: 'Storefront',
      app_type: 'spa',
      callbacks: ['https://shop.example/callback'],
      allowed_logout_urls: ['https://shop.example/'],
      web_origins: ['https://shop.example'],
    });
    await api(s, 'POST', '/clients', { name: 'Back office', app_type: 'regular_web', callbacks: ['https://admin.example/callback'], description: 'Staff only' });
    const worker = await api(s, 'POST', '/clients', { name: 'Order worker', app_type: 'non_interactive' });
    const grant = await api(s, 'POST', '/client-grants', { client_id: worker.client_id, audience: orders.identifier, scope: ['read:orders'], organization_usage: 'allow' });
    const customers = await api(s, 'POST', '/connections', { name: 'customers', strategy: 'auth0', options: { passwordPolicy: 'good', requires_username: false } });
    await api(s, 'PATCH', `/connections/${customers.id}/clients`, [{ client_id: spa.client_id, status: true }]);
    const role = await api(s, 'POST', '/roles', { name: 'Order manager', description: 'Manages orders' });
    await api(s, 'POST', `/roles/${role.id}/permissions`, { permissions: [{ resource_server_identifier: orders.identifier, permission_name: 'write:orders' }] });
    const org = await api(s, 'POST', '/organizations', { name: 'acme', display_name: 'Acme Corp', branding: { colors: { primary: '#112233', page_background: '#ffffff' } } });
    await api(s, 'POST', `/organizations/${org.id}/enabled_connections`, { connection_id: customers.id, assign_membership_on_login: true });
    await api(s, 'POST', `/organizations/${org.id}/client-grants`, { grant_id: grant.id });
    await api(s, 'PATCH', '/tenants/settings', {
      friendly_name: 'Acme Shop',
      support_email: 'help@acme.example',
      support_url: 'https://acme.example/help',
      enabled_locales: ['en', 'fr'],
      session_lifetime: 48,
      idle_session_lifetime: 12,
      default_audience: orders.identifier,
      default_directory: 'customers',
    });
    await api(s, 'PATCH', '/branding', { colors: { primary: '#0f766e', page_background: '#f8fafc' }, logo_url: 'https://cdn.acme.example/logo.png', favicon_url: 'https://cdn.acme.example/favicon.png' });
    await api(s, 'PUT', '/prompts/login/custom-text/fr', { login: { title: 'Bienvenue chez Acme', buttonText: 'Entrer' } });
    await api(s, 'PUT', '/prompts/signup/custom-text/en', { signup: { title: 'Join Acme' } });
    await api(s, 'PATCH', '/attack-protection/brute-force-protection', { max_attempts: 5 });
    await api(s, 'PATCH', '/attack-protection/suspicious-ip-throttling', { enabled: false });
    await api(s, 'POST', '/custom-domains', { domain: 'login.acme.example', type: 'self_managed_certs' });
    await api(s, 'POST', '/emails/provider', {
      name: 'smtp',
      enabled: true,
      default_from_address: 'no-reply@acme.example',
      credentials: { smtp_host: 'smtp.acme.example', smtp_port: 587, smtp_user: 'mailer', smtp_pass: 'not-in-any-dump' },
    });
    await api(s, 'PUT', '/email-templates/verify_email', {
      template: 'verify_email',
      body: '<p>Hello {{ user.email }}, please verify: {{ url }}</p>',
      subject: 'Verify your Acme account',
      from: 'Acme <no-reply@acme.example>',
      urlLifetimeInSeconds: 86400,
      syntax: 'liquid',
      enabled: true,
    });
  }

  let trustedBefore: string | undefined;
  beforeAll(async () => {
    trustedBefore = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    ({ certFile, keyFile } = await ensureDevCertificate(mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cert-'))));
  });
  afterAll(async () => {
    await server?.close();
    // Trust is for this file's own server: a file run next in the same worker (isolate: false) checks certificates again.
    if (trustedBefore === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = trustedBefore;
  });

  it('dumps a built tenant to YAML and to a directory', { timeout: 300_000 }, async () => {
    const s = await start();
    await buildTenant(s);
    await dump({ output_folder: out('built-yaml'), format: 'yaml', config: config(s) });
    await dump({ output_folder: out('built-dir'), format: 'directory', config: config(s) });
    const yaml = readFileSync(out('built-yaml/tenant.yaml'), 'utf8');
    for (const expected of ['Orders API', 'Storefront', 'Back office', 'Order worker', 'customers', 'Order manager', 'acme', 'Acme Shop', 'Bienvenue chez Acme', '#0f766e', 'max_attempts: 5', 'All Applications']) {
      if (expected === 'All Applications') expect(yaml).not.toContain(expected);
      else expect(yaml, expected).toContain(expected);
    }
    // Organizations come with their client grants (the reason organizations used to be left out).
    expect(yaml).toMatch(/client_grants:\s*\n\s*- client_id: Order worker/);
    const files = readTree(out('built-dir'));
    expect(Object.keys(files)).toEqual(expect.arrayContaining(['tenant.json', 'clients/Storefront.json', 'resource-servers/Orders API.json', 'organizations/acme.json', 'roles/Order manager.json']));
  });

  it('deploys the dump into an empty tenant, dumps the same files again, and a second deploy changes nothing', { timeout: 900_000 }, async () => {
    const s = await start();
    await deploy({ input_file: out('built-yaml/tenant.yaml'), config: config(s) });
    await dump({ output_folder: out('deployed-yaml'), format: 'yaml', config: config(s) });
    await dump({ output_folder: out('deployed-dir'), format: 'directory', config: config(s) });
    expect(withoutIds(readTree(out('deployed-yaml')))).toEqual(withoutIds(readTree(out('built-yaml'))));
    expect(withoutIds(readTree(out('deployed-dir')))).toEqual(withoutIds(readTree(out('built-dir'))));

    const before = await snapshot(s);
    await deploy({ input_file: out('deployed-dir'), config: config(s) });
    // The tool still checks every deploy against its schema (compiled once for the file, above): this one is refused.
    writeFileSync(out('invalid.yaml'), 'clients: not-a-list\n');
    await expect(deploy({ input_file: out('invalid.yaml'), config: config(s) })).rejects.toThrow(/Schema validation failed/);
    expect(await snapshot(s)).toEqual(before);
  });
});

/**
 * Sign-in fixtures over real HTTP: applications and users made through the Management API, and a minimal
 * browser (a cookie jar, manual redirects, the hosted pages' forms read from their HTML) for flows that do
 * not need Chromium.
 */
import { managementToken, type TestServer } from './server.js';

export async function management(test: TestServer, method: string, path: string, body?: unknown): Promise<Response> {
  const token = await managementToken(test);
  return fetch(`${test.url}/api/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

async function ok<T>(response: Response): Promise<T> {
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
  return (response.status === 204 ? undefined : await response.json()) as T;
}

export interface TestApp {
  client_id: string;
  client_secret?: string;
}

/** A client with the database connection enabled; defaults: a first-party SPA allowed the browser grants. */
export async function createApp(test: TestServer, properties: Record<string, unknown> = {}): Promise<TestApp> {
  const app = await ok<TestApp>(
    await management(test, 'POST', '/clients', {
      name: 'Test app',
      app_type: 'spa',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'implicit', 'refresh_token'],
      callbacks: ['https://app.example/callback'],
      allowed_logout_urls: ['https://app.example/'],
      web_origins: ['https://app.example'],
      ...properties,
    }),
  );
  const connections = await ok<{ id: string; name: string }[]>(await management(test, 'GET', '/connections'));
  const database = connections.find((c) => c.name === 'Username-Password-Authentication')!;
  await ok(await management(test, 'PATCH', `/connections/${database.id}/clients`, [{ client_id: app.client_id, status: true }]));
  return app;
}

export async function createUser(test: TestServer, email: string, password: string, extra: Record<string, unknown> = {}): Promise<{ user_id: string }> {
  return ok(await management(test, 'POST', '/users', { connection: 'Username-Password-Authentication', email, password, ...extra }));
}

/** A cookie jar and manual redirects: what a browser does, minus rendering. */
export class TestBrowser {
  readonly cookies = new Map<string, string>();

  private remember(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1).trim());
    }
  }

  private cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }

  async get(url: string): Promise<Response> {
    const response = await fetch(url, { redirect: 'manual', headers: this.cookieHeader() });
    this.remember(response);
    return response;
  }

  async post(url: string, fields: Record<string, string>): Promise<Response> {
    const response = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...this.cookieHeader() },
      body: new URLSearchParams(fields).toString(),
    });
    this.remember(response);
    return response;
  }

  /**
   * Posts a hosted page's form and follows where it leads, as a browser does: a refused form comes back as its
   * page (post/redirect/get), a finished one as the URL outside the server (a client's callback).
   */
  async submit(url: string, fields: Record<string, string>): Promise<Response | URL> {
    return this.follow(new URL(url).origin, await this.post(url, fields));
  }

  /** The page a `submit` came back to; throws when it left the server instead. */
  async submitExpectingPage(url: string, fields: Record<string, string>): Promise<Response> {
    const result = await this.submit(url, fields);
    if (result instanceof URL) throw new Error(`expected a page, went to ${result.href}`);
    return result;
  }

  /** Follows redirects from `response` until one leaves `base` (the server) or a page is shown. */
  async follow(base: string, response: Response): Promise<Response | URL> {
    let current = response;
    for (let i = 0; i < 10; i++) {
      const location = current.headers.get('location');
      if (current.status < 300 || current.status >= 400 || !location) return current;
      const next = new URL(location, current.url || base);
      if (!next.href.startsWith(base)) return next;
      current = await this.get(next.href);
    }
    throw new Error('too many redirects');
  }
}

/** The single form of a hosted page: its action and hidden fields. */
export function readForm(page: string, base: string): { action: string; fields: Record<string, string> } {
  const form = /<form[^>]*method="post"[^>]*action="([^"]*)"/i.exec(page);
  if (!form?.[1]) throw new Error('no form on the page');
  const fields: Record<string, string> = {};
  for (const match of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) fields[match[1]!] = decode(match[2]!);
  return { action: new URL(decode(form[1]), base).href, fields };
}

function decode(value: string): string {
  return value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Drives /authorize through the hosted login form; resolves to the URL the browser is sent to at the end. */
export async function logIn(test: TestServer, browser: TestBrowser, authorizeQuery: Record<string, string>, credentials: { username: string; password: string }): Promise<URL> {
  const start = await browser.follow(test.url, await browser.get(`${test.url}/authorize?${new URLSearchParams(authorizeQuery)}`));
  if (start instanceof URL) return start;
  const page = await start.text();
  if (start.status !== 200) throw new Error(`expected the login page, got ${start.status}: ${page.slice(0, 300)}`);
  const form = readForm(page, test.url);
  const done = await browser.follow(test.url, await browser.post(form.action, { ...form.fields, ...credentials }));
  if (done instanceof URL) return done;
  throw new Error(`login did not redirect back: ${done.status} ${(await done.text()).slice(0, 300)}`);
}

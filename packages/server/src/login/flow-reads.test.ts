/**
 * What an authorization-code flow through the hosted login page reads (issue #18): once the config cache has the
 * tenant's connections, no step reads a connection row (the page's buttons, home-realm discovery and the login
 * each looked them up), and a connection added through the Management API shows on the very next page.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { createApp, createUser, logIn, management, readForm, TestBrowser, type TestApp } from '../test-support/sign-in.js';

const CALLBACK = 'https://app.example/cb';
const EMAIL = 'flow-reads@example.com';
const PASSWORD = 'correct horse battery staple 9';

describe('authorization-code flow reads', () => {
  let server: TestServer;
  let app: TestApp;
  let recording: string[] | undefined;
  const connectionReads = (queries: string[]) => queries.filter((sql) => /\bfrom\s+"?connection(s|_clients)"?/i.test(sql));
  const authorizeQuery = (challenge: string) => ({
    response_type: 'code',
    client_id: app.client_id,
    redirect_uri: CALLBACK,
    scope: 'openid profile',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'xyz',
  });

  beforeAll(async () => {
    server = await startTestServer({ onQuery: ({ sql }) => recording?.push(sql) });
    app = await createApp(server, { callbacks: [CALLBACK] });
    await createUser(server, EMAIL, PASSWORD);
  });
  afterAll(() => server?.close());

  async function flow(): Promise<string[]> {
    recording = [];
    try {
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const back = await logIn(server, new TestBrowser(), authorizeQuery(challenge), { username: EMAIL, password: PASSWORD });
      const code = back.searchParams.get('code');
      expect(code).toEqual(expect.any(String));
      const res = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', client_id: app.client_id, code: code!, code_verifier: verifier, redirect_uri: CALLBACK }),
      });
      expect(res.status).toBe(200);
      return recording;
    } finally {
      recording = undefined;
    }
  }

  it('reads no connection rows once they are cached, and shows a new connection on the next page', async () => {
    expect(connectionReads(await flow()).length).toBeGreaterThan(0);
    const warm = await flow();
    expect(connectionReads(warm)).toEqual([]);
    // The essential work stays: the user is looked up and the code stored and claimed.
    expect(warm.some((sql) => /from "users" where "connection_id"/.test(sql))).toBe(true);
    expect(warm.some((sql) => /insert into "authorization_codes"/.test(sql))).toBe(true);

    const created = await management(server, 'POST', '/connections', {
      name: 'flow-reads-github',
      strategy: 'github',
      enabled_clients: [app.client_id],
      options: { client_id: 'gh-client', client_secret: 'gh-secret' },
    });
    expect(created.status).toBe(201);
    const browser = new TestBrowser();
    const page = await browser.follow(server.url, await browser.get(`${server.url}/authorize?${new URLSearchParams(authorizeQuery('x'.repeat(43)))}`));
    if (page instanceof URL) throw new Error(`expected the login page, went to ${page.href}`);
    const html = await page.text();
    expect(readForm(html, server.url).action).toContain('/u/login');
    expect(html).toContain('connection=flow-reads-github');
  });
});

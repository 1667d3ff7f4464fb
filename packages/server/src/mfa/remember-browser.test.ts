/**
 * What remembering a browser costs, counted in the database queries the server runs (its query observer): a
 * login from a remembered browser runs one query more per step (the password's POST, the resume) than the same
 * login on a tenant without MFA, each a read of mfa_remembered_browsers; a login without the cookie runs none.
 * Real SQLite and PostgreSQL, real HTTP, TOTP codes from otplib.
 */
import { createHash, randomBytes } from 'node:crypto';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { createApp, createUser, management, readForm, TestBrowser, type TestApp } from '../test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 9';
const CALLBACK = 'http://127.0.0.1:9/callback';
/**
 * Queries a request does not cause: cache refills and the tenant log (with its stats rollups) written after the
 * answer; and the background workers: log streams, back-channel logout deliveries, and the raw SQL of the outbox,
 * deliveries, jobs and change bus, which quotes no identifiers.
 */
const NOISE = /"logs"|"log_streams"|"log_daily_counts"|"log_user_logins"|"backchannel_logout_deliveries"|from "clients"|from "tenants"|^[^"]*$/;

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('Remember this browser: database round trips (%s)', (dialect) => {
  let test: TestServer;
  let app: TestApp;
  const email = `remember${Date.now()}@example.com`;
  let recording: string[] | undefined;

  const authorizeUrl = () => {
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    const query = { client_id: app.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' };
    return `${test.url}/authorize?${new URLSearchParams(query)}`;
  };

  /** The password on the login page, then wherever it leads: the app's callback, or a page. */
  async function passwordLogin(http: TestBrowser): Promise<Response | URL> {
    const start = await http.follow(test.url, await http.get(authorizeUrl()));
    if (start instanceof URL) throw new Error(`expected the login page, went to ${start.href}`);
    const login = readForm(await start.text(), test.url);
    return http.submit(login.action, { ...login.fields, username: email, password: PASSWORD });
  }

  /** Queries run by a password login with this browser's cookies but a new session. */
  async function queriesOfLogin(http: TestBrowser): Promise<string[]> {
    http.cookies.delete('gh_session');
    // Warm: the tenant (just changed) and the client are cached, as on a server that has been running.
    await http.get(`${test.url}/.well-known/openid-configuration`);
    recording = [];
    const landed = await passwordLogin(http);
    const seen = recording;
    recording = undefined;
    expect(landed).toBeInstanceOf(URL);
    expect((landed as URL).searchParams.get('code')).toBeTruthy();
    return seen;
  }

  const remembered = (queries: string[]) => queries.filter((sql) => sql.includes('mfa_remembered_browsers'));

  beforeAll(async () => {
    test = await startTestServer({ dialect, onQuery: ({ sql }) => recording?.push(sql) });
    app = await createApp(test, { callbacks: [CALLBACK] });
    await createUser(test, email, PASSWORD);
    expect((await management(test, 'PUT', '/guardian/factors/otp', { enabled: true })).status).toBe(200);
  });
  afterAll(() => test?.close());

  it('costs one read per step from a remembered browser, and nothing without the cookie', async () => {
    const setPolicy = async (policies: string[]) => expect((await management(test, 'PUT', '/guardian/policies', policies)).status).toBe(200);
    await setPolicy(['all-applications']);

    // Enroll, keep the recovery code, and tick "Remember this browser".
    const http = new TestBrowser();
    const enroll = await passwordLogin(http);
    if (enroll instanceof URL) throw new Error('expected the MFA page');
    const page = await enroll.text();
    const secret = /data-secret="([A-Z2-7]+)"/.exec(page)![1]!;
    const form = readForm(page, test.url);
    const keep = await http.submitExpectingPage(form.action, { ...form.fields, code: await generate({ secret, epoch: Math.floor(Date.now() / 1000) }) });
    const saved = readForm(await keep.text(), test.url);
    expect(await http.submit(saved.action, { ...saved.fields, rememberBrowser: 'true' })).toBeInstanceOf(URL);
    expect(http.cookies.has('gh_mfa_remember')).toBe(true);

    const fromRemembered = await queriesOfLogin(http);
    await setPolicy([]);
    const withoutMfa = await queriesOfLogin(http);
    // Measured: the difference, and what it is.
    expect(remembered(fromRemembered)).toHaveLength(2);
    expect(remembered(fromRemembered).every((sql) => /^select/i.test(sql.trim()))).toBe(true);
    expect(fromRemembered.length).toBeGreaterThan(10);
    // Apart from those two reads, the same queries as the login without MFA (background workers, caches
    // refilled and the asynchronous tenant log aside, which run on their own schedule).
    const requestQueries = (queries: string[]) => queries.filter((sql) => !NOISE.test(sql) && !sql.includes('mfa_remembered_browsers')).sort();
    expect(requestQueries(fromRemembered)).toEqual(requestQueries(withoutMfa));
    expect(remembered(withoutMfa)).toEqual([]);

    // Without the cookie the policy's login goes to the second step without looking for one.
    await setPolicy(['all-applications']);
    const other = new TestBrowser();
    other.cookies.set('gh_unrelated', 'x');
    recording = [];
    const step = await passwordLogin(other);
    const seen = recording;
    recording = undefined;
    expect(step).not.toBeInstanceOf(URL);
    expect(remembered(seen)).toEqual([]);
  });
});

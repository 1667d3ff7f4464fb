/**
 * What MFA on the hosted pages costs, counted in the database queries the server runs (its query observer): a
 * password + TOTP login runs what the login without MFA runs, plus the factor check, the second step's page
 * loads, and one statement of MFA's own per step. And what remembering a browser costs: a
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
// Connections are read into the config cache (tenancy/config-cache.ts) once per tenant change: a refill, not the
// login's. Every 100th session started purges lapsed sessions (login/session.ts): maintenance, in whichever login.
const NOISE =
  /"logs"|"log_streams"|"log_daily_counts"|"log_user_logins"|"backchannel_logout_deliveries"|from "clients"|from "tenants"|from "connections"|from "connection_clients"|^delete from "(sso_sessions|saml_logouts|saml_session_participants)" where \(?"expires_at" <|^[^"]*$/;

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

  it('counts the statements of a password + TOTP login on the hosted pages: one of MFA\'s own per step beyond the factor check and the page loads', async () => {
    const setPolicy = async (policies: string[]) => expect((await management(test, 'PUT', '/guardian/policies', policies)).status).toBe(200);
    await setPolicy(['all-applications']);
    const who = `steps${Date.now()}@example.com`;
    await createUser(test, who, PASSWORD);
    const login = async (http: TestBrowser) => {
      const start = await http.follow(test.url, await http.get(authorizeUrl()));
      if (start instanceof URL) throw new Error(`expected the login page, went to ${start.href}`);
      const form = readForm(await start.text(), test.url);
      return http.submit(form.action, { ...form.fields, username: who, password: PASSWORD });
    };
    // Enrolled once (not counted).
    const enrolling = new TestBrowser();
    const enroll = await login(enrolling);
    if (enroll instanceof URL) throw new Error('expected the MFA page');
    const page = await enroll.text();
    const secret = /data-secret="([A-Z2-7]+)"/.exec(page)![1]!;
    const form = readForm(page, test.url);
    const keep = await enrolling.submitExpectingPage(form.action, { ...form.fields, code: await generate({ secret, epoch: Math.floor(Date.now() / 1000) }) });
    const saved = readForm(await keep.text(), test.url);
    expect(await enrolling.submit(saved.action, { ...saved.fields })).toBeInstanceOf(URL);

    const record = async <T>(run: () => Promise<T>): Promise<[T, string[]]> => {
      await fetch(`${test.url}/.well-known/openid-configuration`);
      recording = [];
      const result = await run();
      const seen = recording.filter((sql) => !NOISE.test(sql));
      recording = undefined;
      return [result, seen];
    };
    const http = new TestBrowser();
    const [challenge, passwordStep] = await record(() => login(http));
    if (challenge instanceof URL) throw new Error('expected the MFA page');
    const codeForm = readForm(await challenge.text(), test.url);
    const [landed, otpStep] = await record(async () => http.submit(codeForm.action, { ...codeForm.fields, code: await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }) }));
    expect(landed).toBeInstanceOf(URL);
    expect((landed as URL).searchParams.get('code')).toBeTruthy();
    await setPolicy([]);
    const [plainLanded, plain] = await record(() => login(new TestBrowser()));
    expect(plainLanded).toBeInstanceOf(URL);

    const mfaLogin = [...passwordStep, ...otpStep];
    // The factor check: the enrollments read (the page's, and the answer's) and the time step's conditional write.
    const factorCheck = mfaLogin.filter((sql) => sql.includes('"mfa_enrollments"'));
    expect(factorCheck).toHaveLength(3);
    // Each request of the second step reads its transaction with the challenge and its user, in one statement,
    // where another hosted page reads its transaction alone: that is the page's cost, not MFA's.
    const pageLoads = mfaLogin.filter((sql) => /from "login_transactions" t left join "mfa_challenges"/.test(sql));
    expect(pageLoads).toHaveLength(2);
    // MFA's own, one per step: the password step leaves the challenge (one upsert, instead of the session and
    // transaction writes, which move to the second step), the second step uses it up (one delete).
    const own = mfaLogin.filter((sql) => sql.includes('"mfa_challenges"') && !pageLoads.includes(sql));
    expect(own).toHaveLength(2);
    expect(own[0]).toMatch(/^insert into "mfa_challenges".* on conflict/is);
    expect(own[1]).toMatch(/^delete from "mfa_challenges"/i);
    // Everything else is what the login without MFA runs, statement for statement.
    const rest = mfaLogin.filter((sql) => !factorCheck.includes(sql) && !pageLoads.includes(sql) && !own.includes(sql)).sort();
    expect(rest).toEqual([...plain].sort());
    console.info(`[hosted ${dialect}] statements: login without MFA ${plain.length}; with MFA ${mfaLogin.length} = the same + factor check ${factorCheck.length} + second-step page loads ${pageLoads.length} + MFA's own ${own.length} (one per step)`);
  });

});

/**
 * POST /passwordless/start over real HTTP on both dialects: codes by email (a real SMTP server in the test
 * process) and by SMS (a local HTTP server as the gateway, checked for what it received), client
 * authentication, the connection rules, no enumeration, CORS, and bad input in the OAuth shape. Also the
 * sms connection's secrets: sealed at rest, never shown by the Management API.
 */
import { jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { management, createApp } from '../../test-support/sign-in.js';
import { postgresAvailable } from '../../test-support/services.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { findPasswordlessCode } from '../../store/passwordless-codes.js';
import { PASSWORDLESS_OTP_GRANT } from '../token/passwordless-otp.js';
import { createClient, type TestClient } from '../user-tokens/testing.js';
import { codeIn, createPasswordlessConnection, postJson, startGateway, startSmtp, type TestGateway, type TestSmtp } from './testing.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
const GATEWAY_SECRET = 'gateway-shared-secret-0123456789';

describe.each(dialects)('POST /passwordless/start on %s', (dialect) => {
  let server: TestServer;
  let smtp: TestSmtp;
  let gateway: TestGateway;
  let spa: TestClient;
  let web: TestClient;
  let email: { id: string; name: string };
  let sms: { id: string; name: string };
  const start = (body: Record<string, unknown>, headers: Record<string, string> = {}) => postJson(server, '/passwordless/start', body, headers);
  const otp = (body: Record<string, unknown>) => postJson(server, '/oauth/token', { grant_type: PASSWORDLESS_OTP_GRANT, ...body });
  let n = 0;
  const address = () => `someone-${dialect}-${++n}@example.com`;

  beforeAll(async () => {
    [smtp, gateway] = await Promise.all([startSmtp(), startGateway()]);
    server = await startTestServer({ dialect, env: { GATEHOUSE_SMTP_URL: smtp.url } });
    const grants = ['implicit', 'authorization_code', PASSWORDLESS_OTP_GRANT];
    spa = await createClient(server, { grant_types: grants });
    web = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: grants });
    const clients = [spa.client.client_id, web.client.client_id];
    email = await createPasswordlessConnection(server, 'email', clients);
    sms = await createPasswordlessConnection(server, 'sms', clients, {
      provider: 'sms_gateway',
      gateway_url: gateway.url,
      from: '+15550009999',
      template: 'Your code for Gatehouse: @@password@@',
      gateway_authentication: { method: 'bearer', subject: 'urn:gatehouse', audience: 'urn:sms-gateway', secret: GATEWAY_SECRET },
    });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
    await gateway?.close();
  });

  it('emails a six-digit code that logs in once, and answers {_id, email, email_verified}', async () => {
    const to = address();
    const res = await start({ client_id: spa.client.client_id, connection: email.name, email: to.toUpperCase(), send: 'code' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ _id: expect.stringMatching(/^[A-Za-z0-9]{24}$/), email: to, email_verified: false });
    expect(res.headers.get('cache-control')).toBe('no-store');
    const mail = await smtp.waitFor(to);
    const code = codeIn(mail.text);
    expect(mail.subject).toMatch(/verification code/i);
    const tokens = await otp({ client_id: spa.client.client_id, realm: email.name, username: to, otp: code, scope: 'openid email' });
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String), id_token: expect.any(String) });
    // Only the hash is stored: the code itself appears nowhere in the row.
    const again = await otp({ client_id: spa.client.client_id, realm: email.name, username: to, otp: code });
    expect(again.status).toBe(403);
  });

  it('logs cs for a code and cls for a link, found by q, with the address but never the code', async () => {
    const [codeTo, linkTo] = [address(), address()];
    expect((await start({ client_id: spa.client.client_id, connection: email.name, email: codeTo, send: 'code' })).status).toBe(200);
    const linked = await start({ client_id: spa.client.client_id, connection: email.name, email: linkTo, send: 'link', authParams: { response_type: 'token id_token', redirect_uri: spa.client.callbacks[0], scope: 'openid', nonce: 'log-nonce' } });
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    const code = codeIn((await smtp.waitFor(codeTo)).text);
    await server.server.services.tenantLogs.flush();
    const search = async (q: string) => (await (await management(server, 'GET', `/logs?q=${encodeURIComponent(q)}`)).json()) as Record<string, unknown>[];
    const [sent] = await search(`type:cs AND user_name:"${codeTo}"`);
    expect(sent).toMatchObject({ type: 'cs', client_id: spa.client.client_id, connection: email.name, strategy: 'email', strategy_type: 'passwordless', user_name: codeTo });
    expect(JSON.stringify(sent)).not.toContain(code);
    expect(await search(`type:cls AND user_name:"${linkTo}"`)).toEqual([expect.objectContaining({ type: 'cls', client_id: spa.client.client_id, connection: email.name })]);
  });

  it('texts a code through the gateway: JSON {recipient, body, sender} with a bearer JWT signed by the sealed secret', async () => {
    const before = gateway.received.length;
    const res = await start({ client_id: spa.client.client_id, connection: sms.name, phone_number: '+1 (555) 010-0200', send: 'code' }, { 'x-request-language': 'fr' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ _id: expect.any(String), phone_number: '+15550100200', phone_verified: false, request_language: 'fr' });
    expect(gateway.received).toHaveLength(before + 1);
    const received = gateway.received.at(-1)!;
    expect(received.body).toEqual({ recipient: '+15550100200', body: expect.stringMatching(/^Your code for Gatehouse: \d{6}$/), sender: '+15550009999' });
    expect(received.headers['content-type']).toBe('application/json');
    const bearer = /^Bearer (.+)$/.exec(received.headers.authorization ?? '')?.[1];
    const { payload, protectedHeader } = await jwtVerify(bearer!, new TextEncoder().encode(GATEWAY_SECRET), { audience: 'urn:sms-gateway', subject: 'urn:gatehouse' });
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(300);
    // The code from the SMS logs in.
    const code = codeIn(received.body.body as string);
    const tokens = await otp({ client_id: spa.client.client_id, realm: sms.name, username: '+15550100200', otp: code, scope: 'openid' });
    expect(tokens.status).toBe(200);
  });

  it('answers 400 sms_provider_error when the gateway refuses, and keeps no code behind', async () => {
    gateway.status = 503;
    try {
      const res = await start({ client_id: spa.client.client_id, connection: sms.name, phone_number: '+15550100300', send: 'code' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'sms_provider_error', error_description: 'Unexpected response while calling the SMS gateway: 503' });
      expect(await findPasswordlessCode(server.server.prepared.store.db, sms.id, '+15550100300')).toBeUndefined();
    } finally {
      gateway.status = 200;
    }
  });

  it('refuses the twilio provider (not spoken here) with 400 sms_provider_error instead of losing the code', async () => {
    const twilio = await createPasswordlessConnection(server, 'sms', [spa.client.client_id], { provider: 'twilio', twilio_sid: 'AC123', twilio_token: 'tw-token' });
    const res = await start({ client_id: spa.client.client_id, connection: twilio.name, phone_number: '+15550100350', send: 'code' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'sms_provider_error', error_description: expect.stringMatching(/sms_gateway/) });
  });

  it('a new start replaces the pending code: the old one no longer works', async () => {
    const to = address();
    await start({ client_id: spa.client.client_id, connection: email.name, email: to, send: 'code' });
    const first = codeIn((await smtp.waitFor(to, 0)).text);
    await start({ client_id: spa.client.client_id, connection: email.name, email: to, send: 'code' });
    const second = codeIn((await smtp.waitFor(to, 1)).text);
    if (first !== second) {
      const old = await otp({ client_id: spa.client.client_id, realm: email.name, username: to, otp: first });
      expect(old.status).toBe(403);
    }
    const current = await otp({ client_id: spa.client.client_id, realm: email.name, username: to, otp: second });
    expect(current.status).toBe(200);
  });

  it('confidential clients must authenticate: no secret or a wrong one is 401 invalid_client; the right one works', async () => {
    const body = { connection: email.name, email: address(), send: 'code' };
    const none = await start({ client_id: web.client.client_id, ...body });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });
    const wrong = await start({ client_id: web.client.client_id, client_secret: 'not-the-secret', ...body });
    expect(wrong.status).toBe(401);
    const right = await start({ ...web.auth, ...body });
    expect(right.status).toBe(200);
  });

  it('refuses identifiers that do not match the connection, unknown and disabled connections, with 400 invalid_request', async () => {
    const other = await createClient(server, { grant_types: ['implicit'] });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ client_id: spa.client.client_id, connection: email.name, phone_number: '+15550100400', send: 'code' }, /needs email/],
      [{ client_id: spa.client.client_id, connection: sms.name, email: address(), send: 'code' }, /needs phone_number/],
      [{ client_id: spa.client.client_id, connection: email.name, email: address(), phone_number: '+15550100400' }, /exactly one/],
      [{ client_id: spa.client.client_id, connection: email.name, send: 'code' }, /exactly one/],
      [{ client_id: spa.client.client_id, connection: 'no-such-connection', email: address(), send: 'code' }, /not a passwordless connection/],
      [{ client_id: spa.client.client_id, connection: 'Username-Password-Authentication', email: address(), send: 'code' }, /not a passwordless connection/],
      [{ client_id: other.client.client_id, connection: email.name, email: address(), send: 'code' }, /not a passwordless connection/],
      [{ client_id: spa.client.client_id, connection: sms.name, phone_number: '+15550100400', send: 'link' }, /codes only/],
    ];
    for (const [body, description] of cases) {
      const res = await start(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.error_description).toMatch(description);
    }
  });

  it('answers the same for an address with a user and one without (no enumeration)', async () => {
    const known = address();
    await start({ client_id: spa.client.client_id, connection: email.name, email: known, send: 'code' });
    const code = codeIn((await smtp.waitFor(known)).text);
    expect((await otp({ client_id: spa.client.client_id, realm: email.name, username: known, otp: code })).status).toBe(200); // the user now exists
    const unknown = address();
    const a = await start({ client_id: spa.client.client_id, connection: email.name, email: known, send: 'code' });
    const b = await start({ client_id: spa.client.client_id, connection: email.name, email: unknown, send: 'code' });
    expect(a.status).toBe(b.status);
    expect(Object.keys(a.body).sort()).toEqual(Object.keys(b.body).sort());
    expect(a.body.email_verified).toBe(b.body.email_verified);
    expect(a.body._id).not.toBe(b.body._id);
    // Both addresses get a code: what differs happens only in the mailbox.
    await smtp.waitFor(known, 1);
    await smtp.waitFor(unknown, 0);
  });

  it("answers CORS for the client's allowed origins only", async () => {
    const app = await createApp(server, { web_origins: ['https://spa.example'], allowed_origins: ['https://spa.example'] });
    const preflight = await fetch(`${server.url}/passwordless/start`, {
      method: 'OPTIONS',
      headers: { origin: 'https://spa.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'auth0-client, content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://spa.example');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Auth0-Client/);
    const res = await start({ client_id: app.client_id, connection: email.name, email: address(), send: 'code' }, { origin: 'https://spa.example' });
    expect(res.headers.get('access-control-allow-origin')).toBe('https://spa.example');
    const stranger = await start({ client_id: app.client_id, connection: email.name, email: address(), send: 'code' }, { origin: 'https://evil.example' });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers bad input with a 4xx in the OAuth shape, never a 500', async () => {
    const id = spa.client.client_id;
    const bodies: unknown[] = [
      {},
      { client_id: id },
      { client_id: id, connection: email.name, email: { $ne: null } },
      { client_id: id, connection: email.name, email: 'not-an-email', send: 'code' },
      { client_id: id, connection: email.name, email: 'a<b>@example.com', send: 'code' },
      { client_id: id, connection: email.name, email: 'x@example.com,y@example.com', send: 'code' },
      { client_id: id, connection: email.name, email: 'x@example.com\r\nBcc: y@example.com', send: 'code' },
      { client_id: id, connection: sms.name, phone_number: '5550100', send: 'code' },
      { client_id: id, connection: email.name, email: address(), send: 'carrier-pigeon' },
      { client_id: id, connection: email.name, email: address(), authParams: 'scope=openid' },
      { client_id: id, connection: email.name, email: address(), send: 'link', authParams: { redirect_uri: 'https://evil.example/cb', response_type: 'token' } },
      { client_id: id, connection: email.name, email: address(), send: 'link' },
      { client_id: 'x'.repeat(5000), connection: email.name, email: address() },
      { client_id: id, connection: 'a'.repeat(500), email: address() },
      [1, 2, 3],
    ];
    for (const body of bodies) {
      const res = await start(body as Record<string, unknown>);
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body).toEqual({ error: expect.any(String), error_description: expect.any(String) });
    }
    const malformed = await fetch(`${server.url}/passwordless/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"client_id":' });
    expect(malformed.status).toBe(400);
    const text = await fetch(`${server.url}/passwordless/start`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(text.status).toBe(415);
  });

  it('keeps the sms connection secrets sealed at rest and out of every Management API answer', async () => {
    const read = await management(server, 'GET', `/connections/${sms.id}`);
    const shown = (await read.json()) as { options: Record<string, unknown> };
    expect(shown.options).not.toHaveProperty('twilio_token');
    expect(shown.options.gateway_authentication).toEqual({ method: 'bearer', subject: 'urn:gatehouse', audience: 'urn:sms-gateway' });
    expect(JSON.stringify(shown)).not.toContain(GATEWAY_SECRET);
    const row = await server.server.prepared.store.db.selectFrom('connections').select('properties').where('id', '=', sms.id).executeTakeFirstOrThrow();
    expect(row.properties).not.toContain(GATEWAY_SECRET);
    // Writing back what was read keeps the secret (write-only, not wiped): the gateway still gets a valid JWT.
    const patched = await management(server, 'PATCH', `/connections/${sms.id}`, { options: { ...shown.options, twilio_token: 'twilio-token-value' } });
    expect(patched.status).toBe(200);
    const patchedBody = await patched.text();
    expect(patchedBody).not.toContain('twilio-token-value');
    const after = await server.server.prepared.store.db.selectFrom('connections').select('properties').where('id', '=', sms.id).executeTakeFirstOrThrow();
    expect(after.properties).not.toContain('twilio-token-value');
    const before = gateway.received.length;
    expect((await start({ client_id: spa.client.client_id, connection: sms.name, phone_number: '+15550100500', send: 'code' })).status).toBe(200);
    const bearer = /^Bearer (.+)$/.exec(gateway.received[before]!.headers.authorization ?? '')?.[1];
    await expect(jwtVerify(bearer!, new TextEncoder().encode(GATEWAY_SECRET))).resolves.toBeTruthy();
  });
});

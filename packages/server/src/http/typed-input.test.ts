/**
 * Types are never guessed (issue #19, item 4): a JSON body's values are refused when they are not of the
 * schema's type, with the reference's 400 naming the property and the type; text (query strings, form bodies)
 * is read as the schema's type, strictly.
 */
import { Type } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../services.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';

const Typed = Type.Object(
  { count: Type.Optional(Type.Integer()), ratio: Type.Optional(Type.Number()), flag: Type.Optional(Type.Boolean()), name: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

function addProbe(app: App): void {
  app.post('/oauth/_typed', { schema: { body: Typed, hide: true } }, async (request) => ({ received: request.body }));
}

describe('typed input', () => {
  let server: TestServer;
  let token: string;
  beforeAll(async () => {
    server = await startTestServer({ configure: addProbe });
    token = await managementToken(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  const api = (method: string, path: string, body?: string) =>
    fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body }),
    });

  const expectInvalidBody = async (res: Response, message: string) => {
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ statusCode: 400, error: 'Bad Request', message, errorCode: 'invalid_body' });
  };

  it('a number or a boolean where a string belongs is a 400 naming the property, and nothing is created', async () => {
    await expectInvalidBody(await api('POST', '/roles', '{"name":12345,"description":false}'), "Payload validation error: 'Expected type string but found type integer' on property name.");
    await expectInvalidBody(await api('POST', '/roles', '{"name":"ok","description":false}'), "Payload validation error: 'Expected type string but found type boolean' on property description.");
    // 1e999999 is Infinity to JSON.parse: a number, not the text "Infinity".
    await expectInvalidBody(await api('POST', '/roles', '{"name":1e999999}'), "Payload validation error: 'Expected type string but found type number' on property name.");
    const roles = (await (await api('GET', '/roles')).json()) as { name: string }[];
    expect(roles.map((r) => r.name)).not.toContain('12345');
    expect(roles.map((r) => r.name)).not.toContain('Infinity');
  });

  it('a number where a boolean belongs, and a string where an array belongs, are 400s', async () => {
    const created = await api('POST', '/users', JSON.stringify({ connection: 'Username-Password-Authentication', email: 'typed@example.com', password: 'correct horse battery staple 9' }));
    expect(created.status).toBe(201);
    const { user_id } = (await created.json()) as { user_id: string };
    const userPath = `/users/${encodeURIComponent(user_id)}`;
    await expectInvalidBody(await api('PATCH', userPath, '{"blocked":1}'), "Payload validation error: 'Expected type boolean but found type integer' on property blocked.");
    await expectInvalidBody(await api('PATCH', userPath, '{"blocked":"true"}'), "Payload validation error: 'Expected type boolean but found type string' on property blocked.");
    const user = (await (await api('GET', userPath)).json()) as { blocked?: boolean };
    expect(user.blocked ?? false).toBe(false);
    const role = (await (await api('POST', '/roles', '{"name":"typed role"}')).json()) as { id: string };
    await expectInvalidBody(await api('POST', `${userPath}/roles`, JSON.stringify({ roles: role.id })), "Payload validation error: 'Expected type array but found type string' on property roles.");
    expect(await (await api('GET', `${userPath}/roles`)).json()).toEqual([]);
    await expectInvalidBody(await api('POST', `${userPath}/roles`, JSON.stringify({ roles: [7] })), "Payload validation error: 'Expected type string but found type integer' on property roles[0].");
  });

  it('names missing and unknown properties too', async () => {
    await expectInvalidBody(await api('POST', '/roles', '{}'), "Payload validation error: 'Missing required property: name'.");
    await expectInvalidBody(await api('POST', '/roles', '{"name":"x","colour":"red"}'), "Payload validation error: 'Additional properties not allowed: colour'.");
  });

  it('form bodies are text read as the schema types, strictly; JSON bodies are not coerced', async () => {
    const post = (body: string, type: string) => fetch(`${server.url}/oauth/_typed`, { method: 'POST', body, headers: { 'content-type': type } });
    const form = await post('count=12&ratio=0.5&flag=true&name=7', 'application/x-www-form-urlencoded');
    expect(await form.json()).toEqual({ received: { count: 12, ratio: 0.5, flag: true, name: '7' } });
    for (const loose of ['count=0x10', 'count=%205', 'count=1e3', 'count=', 'flag=1', 'ratio=Infinity']) {
      const res = await post(loose, 'application/x-www-form-urlencoded');
      expect(res.status, loose).toBe(400);
      const body = (await res.json()) as { error: string; error_description: string };
      expect(body.error).toBe('invalid_request');
      expect(body.error_description).toMatch(/^Payload validation error: 'Expected type (integer|boolean|number) but found type string/);
    }
    const json = await post('{"count":"12"}', 'application/json');
    expect(json.status).toBe(400);
    expect(await json.json()).toEqual({ error: 'invalid_request', error_description: "Payload validation error: 'Expected type integer but found type string' on property count." });
  });

  it('query strings are read strictly', async () => {
    expect((await api('GET', '/roles?per_page=5&page=0&include_totals=true')).status).toBe(200);
    for (const query of ['per_page=0x10', 'per_page=%205', 'per_page=1e1', 'per_page=5.0', 'include_totals=1', 'include_totals=yes']) {
      const res = await api('GET', `/roles?${query}`);
      expect(res.status, query).toBe(400);
      const body = (await res.json()) as { errorCode: string; message: string };
      expect(body.errorCode).toBe('invalid_query_string');
      expect(body.message).toMatch(/^Query validation error: 'Expected type (integer|boolean) but found type string/);
      expect(body.message).toMatch(/on property (per_page|include_totals)\.$/);
    }
  });
});

/**
 * The Management API as a test file calls it: over real HTTP, with one full-scope token per server (minted on
 * first use; it outlives any test file), a JSON body when given, and the answer read whatever its status.
 * sign-in.ts's `management()` mints a token per call and hands back the raw Response, for fixtures.
 */
import { managementToken, type TestServer } from './server.js';

/** Just these two, so that a test can hold a whole answer to what it expects. */
export interface ManagementAnswer {
  status: number;
  /** The parsed JSON; undefined when the answer has no body (a 204). */
  body: Record<string, unknown>;
}

/** `token` replaces the caller's own for one request (a token with fewer scopes, or another client's). */
export type ManagementCall = (method: string, path: string, body?: unknown, options?: { token?: string }) => Promise<ManagementAnswer>;

/**
 * A caller for `/api/v2` on the server `server()` returns. A getter, because test files make the caller when
 * they are defined and start their server later, in beforeAll.
 */
export function managementCaller(server: () => TestServer): ManagementCall {
  const tokens = new WeakMap<TestServer, Promise<string>>();
  const tokenFor = (test: TestServer): Promise<string> => {
    let token = tokens.get(test);
    if (!token) tokens.set(test, (token = managementToken(test)));
    return token;
  };
  return async (method, path, body, options = {}) => {
    const test = server();
    const res = await fetch(`${test.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${options.token ?? (await tokenFor(test))}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
  };
}

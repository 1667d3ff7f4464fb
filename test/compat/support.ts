/**
 * Shared set-up for the compat suites: the real server, and an access token for the admin client obtained the
 * way SDK users obtain it (client credentials at /oauth/token).
 */
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';

export async function startServerWithAdminToken(): Promise<{ server: TestServer; token: string; baseUrl: string }> {
  const server = await startTestServer();
  const res = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: server.admin.client_id,
      client_secret: server.admin.client_secret,
      audience: `${server.url}/api/v2/`,
    }),
  });
  if (res.status !== 200) throw new Error(`admin token: ${res.status} ${await res.text()}`);
  const { access_token } = (await res.json()) as { access_token: string };
  return { server, token: access_token, baseUrl: `${server.url}/api/v2` };
}

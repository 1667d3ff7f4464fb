/**
 * Requests from a chosen client IP: the connection is made from a loopback address of 127.0.0.0/8 (every one
 * of them is local on Linux), so the server sees that address as the client's, as it would a real one. Lets a
 * test give each scenario its own IP for rate limits and attack protection.
 */
import http from 'node:http';

type Json = Record<string, unknown>;

/** POSTs `body` as JSON to `baseUrl` + `path` from `localAddress`; `host` (default: the base URL's) names the tenant. */
export function postJsonFrom(localAddress: string, baseUrl: string, path: string, body: Json, host = new URL(baseUrl).host): Promise<{ status: number; body: Json }> {
  const url = new URL(baseUrl);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: url.hostname === 'localhost' ? '127.0.0.1' : url.hostname,
        port: url.port,
        path,
        method: 'POST',
        localAddress,
        agent: false,
        headers: { host, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: (text ? JSON.parse(text) : {}) as Json }));
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

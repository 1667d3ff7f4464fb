/**
 * A second server node beside a test server: the same database, data dir (master key), public URL and Redis
 * (when given); its own port, memory and caches. Requests name the tenant by its public host, as a load
 * balancer in front of both would pass it on.
 */
import http from 'node:http';
import { loadConfig } from '../config.js';
import { startServer, type RunningServer } from '../server.js';
import type { TestServer } from './server.js';
import { freePort } from './services.js';

export async function startSecondNode(first: TestServer, env: Record<string, string> = {}): Promise<RunningServer> {
  return startServer(
    loadConfig(
      { GATEHOUSE_LOG_LEVEL: 'silent', GATEHOUSE_PUBLIC_URL: first.url, ...env },
      { port: await freePort(), host: '127.0.0.1', dataDir: first.dataDir, databaseUrl: first.databaseUrl },
    ),
    { log: false },
  );
}

export interface NodeResponse {
  status: number;
  text: string;
  body: Record<string, unknown>;
}

/** One request to the node listening at `listenUrl`, for the tenant at `publicUrl`. */
export function requestNode(
  listenUrl: string,
  publicUrl: string,
  method: string,
  path: string,
  options: { json?: unknown; form?: Record<string, string>; token?: string } = {},
): Promise<NodeResponse> {
  const url = new URL(listenUrl);
  const payload =
    options.json !== undefined ? JSON.stringify(options.json) : options.form ? new URLSearchParams(options.form).toString() : undefined;
  const headers: Record<string, string> = { host: new URL(publicUrl).host };
  if (payload !== undefined) {
    headers['content-type'] = options.json !== undefined ? 'application/json' : 'application/x-www-form-urlencoded';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  return new Promise((resolve, reject) => {
    const request = http.request({ host: url.hostname, port: url.port, path, method, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        let body: Record<string, unknown> = {};
        try {
          body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        } catch {
          // Not JSON: the text is there.
        }
        resolve({ status: response.statusCode ?? 0, text, body });
      });
    });
    request.on('error', reject);
    request.end(payload);
  });
}

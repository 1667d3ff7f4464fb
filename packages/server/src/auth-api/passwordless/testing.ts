/**
 * Fixtures for the passwordless suites: the shared test SMTP server (the mailer delivers to it over SMTP), a
 * local HTTP server playing the SMS gateway (the one vendor edge stood in for), passwordless connections made
 * through the Management API, and readers for what they received.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { management } from '../../test-support/sign-in.js';
import type { TestServer } from '../../test-support/server.js';
import { startTestSmtp, type ReceivedEmail } from '../../test-support/smtp.js';

export interface TestSmtp {
  url: string;
  /** The message to `to` that arrives after `after` earlier ones (waits for the mailer's worker). */
  waitFor(to: string, after?: number): Promise<ReceivedEmail>;
  close(): Promise<void>;
}

/** The shared test SMTP server (test-support/smtp.ts), read per recipient. */
export async function startSmtp(): Promise<TestSmtp> {
  const smtp = await startTestSmtp();
  const to = (address: string) => smtp.received.filter((m) => m.to.some((r) => r.toLowerCase() === address.toLowerCase()));
  return {
    url: smtp.url,
    async waitFor(address, after = 0) {
      await smtp.waitFor(() => to(address).length > after);
      return to(address)[after]!;
    },
    close: () => smtp.close(),
  };
}

export interface GatewayRequest {
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface TestGateway {
  url: string;
  received: GatewayRequest[];
  /** The status the gateway answers with (200 unless a test changes it). */
  status: number;
  close(): Promise<void>;
}

/** A local HTTP server in the SMS gateway's place: records each POST and answers `status`. */
export async function startGateway(): Promise<TestGateway> {
  const gateway: TestGateway = { url: '', received: [], status: 200, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      gateway.received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown> });
      res.writeHead(gateway.status, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gateway.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`;
  gateway.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return gateway;
}

/** The six-digit code in a message text. */
export function codeIn(text: string): string {
  const match = /\b(\d{6})\b/.exec(text);
  if (!match?.[1]) throw new Error(`no code in: ${text.slice(0, 200)}`);
  return match[1];
}

/** The first absolute http(s) URL in a message text. */
export function linkIn(text: string): string {
  const match = /https?:\/\/\S+/.exec(text);
  if (!match) throw new Error(`no link in: ${text.slice(0, 200)}`);
  return match[0];
}

export async function createPasswordlessConnection(
  server: TestServer,
  strategy: 'email' | 'sms',
  clientIds: string[],
  options: Record<string, unknown> = {},
): Promise<{ id: string; name: string }> {
  const name = `${strategy}-${Math.random().toString(36).slice(2, 10)}`;
  const res = await management(server, 'POST', '/connections', { name, strategy, options, enabled_clients: clientIds });
  if (res.status !== 201) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string; name: string };
}

export async function postJson(
  server: TestServer,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { text };
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** What a fuzzing family is, what it is given, and how it sends a request and checks the answer. */
import net from 'node:net';
import type fc from 'fast-check';
import type { Conformance, OpenApiDocument } from '../../../packages/server/src/test-support/openapi-conformance.js';
import type { JwtMaterial } from '../grammars/index.js';
import { checkExchange, type Exchange } from '../invariants.js';
import type { SchemaArbitraries } from '../schema-arbitrary.js';
import type { Target } from '../target.js';

export interface FuzzContext {
  target: Target;
  document: OpenApiDocument;
  conformance: Conformance;
  schemas: SchemaArbitraries;
  /** A Management API token with every scope (the admin client's). */
  token: string;
  /** Ids of real objects, by the path parameter that names them (`id`, `user_id`, …), and client ids. */
  ids: Record<string, string[]>;
  /** A public client allowed the password-realm grant and cross-origin authentication from https://app.example. */
  clientId: string;
  jwt: JwtMaterial;
  /** What no response may contain (the target's secrets). */
  secrets: Record<string, string>;
}

export interface FuzzRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Family<I = unknown> {
  name: string;
  /** What it sends, in a line (printed with the figures). */
  summary: string;
  arbitrary(context: FuzzContext): fc.Arbitrary<I>;
  /** Sends one input; returns what is wrong with the answers (empty: every invariant held). */
  run(context: FuzzContext, input: I): Promise<string[]>;
  /** What failures of one kind share, for grouping them (by default the problem's text, ids and numbers left out). */
  signature?: (problem: string) => string;
  /** Requests one input makes, when more than one (the races). */
  requestsPerInput?: (input: I) => number;
}

/** fetch, tried again once when the connection itself failed (a kept-alive socket the server had just closed). */
async function fetchOnce(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if ((error as Error).message !== 'fetch failed') throw error;
    return fetch(url, init);
  }
}

export async function send(context: FuzzContext, request: FuzzRequest): Promise<{ exchange: Exchange; problems: string[] }> {
  const response = await fetchOnce(`${context.target.url}${request.url}`, {
    method: request.method,
    redirect: 'manual',
    ...(request.headers && { headers: request.headers }),
    ...(request.body !== undefined && { body: request.body }),
  });
  const exchange: Exchange = { method: request.method, url: request.url, status: response.status, headers: response.headers, body: await response.text() };
  return { exchange, problems: checkExchange(exchange, context).map((p) => `${request.method} ${request.url.split('?')[0]}: ${p}`) };
}

/** A chunked body's data. */
function dechunk(text: string): string {
  let out = '';
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\r\n', at);
    if (end < 0) break;
    const size = parseInt(text.slice(at, end), 16);
    if (!size) break;
    out += text.slice(end + 2, end + 2 + size);
    at = end + 2 + size + 2;
  }
  return out;
}

/** A request written byte for byte (duplicate headers, unknown methods), and the answer read back. */
export function sendRaw(context: FuzzContext, text: string): Promise<Exchange & { raw: string }> {
  const { hostname, port } = new URL(context.target.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname === 'localhost' ? '127.0.0.1' : hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    socket.setTimeout(15_000, () => socket.destroy(new Error('no answer within 15 s')));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('latin1');
      const [head = '', ...rest] = raw.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers = new Headers();
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
      }
      const [method = '', url = ''] = text.split(' ');
      let body = rest.join('\r\n\r\n');
      if (/chunked/i.test(headers.get('transfer-encoding') ?? '')) body = dechunk(body);
      // The first answer only: what follows may answer the leftovers of a request the server read differently.
      const length = Number(headers.get('content-length') ?? Number.NaN);
      if (Number.isInteger(length)) body = body.slice(0, length);
      resolve({ method, url, status: Number(statusLine.split(' ')[1] ?? 0), headers, body: Buffer.from(body, 'latin1').toString('utf8'), raw });
    });
    socket.end(text);
  });
}

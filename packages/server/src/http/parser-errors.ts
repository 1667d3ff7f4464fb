/**
 * Answers for requests that never reach Fastify's router: what Node's HTTP parser refuses (an oversized header,
 * a method it does not know, a malformed line, a request that does not arrive in time) and CONNECT, which Node
 * hands to a 'connect' listener or, without one, answers by closing the connection. Each is answered in the
 * family of the request's path (error-render.ts), as any routed error is, and the connection is then closed.
 *
 * The path is read from the request line: in the packet that failed, or as remembered from the packet that
 * began the request.
 */
import type { Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import type { FastifyBaseLogger } from 'fastify';
import { renderErrorFor } from './error-render.js';
import { routeMiss } from './error-handler.js';
import { HeaderFieldsTooLarge, InvalidInput, InvalidRequest, RequestTimeout, type ProtocolError } from './errors.js';
import type { RouteIndex } from './route-index.js';
import { SECURITY_HEADERS } from './security-headers.js';

/** `METHOD target HTTP/x.y`: a token, then visible ASCII. Anything else is not a request line we can name. */
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}) ([\x21-\x7e]{1,16384}) HTTP\/\d\.\d\r?$/;
const LAST_REQUEST_START = Symbol('the request line whose headers are still arriving on this connection');
const MAX_LINE = 16 * 1024 + 64;

type TrackedSocket = Socket & { [LAST_REQUEST_START]?: string };

interface RequestLine {
  method: string;
  target: string;
}

/** Whether `packet` begins with a request line: cheap enough to ask of every packet (no decoding, no regex). */
function beginsRequest(packet: Buffer): boolean {
  const first = packet[0];
  // Requests begin with a method, in letters; a body rarely does, and is then cheap to rule out.
  if (first === undefined || !((first >= 0x41 && first <= 0x5a) || (first >= 0x61 && first <= 0x7a))) return false;
  const end = packet.indexOf(0x0a);
  if (end < 9 || end > MAX_LINE) return false;
  const crlf = packet[end - 1] === 0x0d ? 1 : 0;
  return packet.toString('latin1', end - crlf - 9, end - crlf - 3) === ' HTTP/';
}

function parseLine(text: string | undefined): RequestLine | undefined {
  const match = text === undefined ? null : REQUEST_LINE.exec(text);
  return match ? { method: match[1]!, target: match[2]! } : undefined;
}

function requestLine(packet: Buffer | undefined): RequestLine | undefined {
  return packet && beginsRequest(packet) ? parseLine(packet.toString('latin1', 0, packet.indexOf(0x0a))) : undefined;
}

/**
 * Keeps the request line of the request under way: the packet that fails may not hold it (headers that go on in
 * later packets; a body cut short by the end of the connection, which fails with no packet at all). Node's own
 * 'data' listener (the parser) was added first, so a packet that fails is not yet seen here.
 */
function remember(this: TrackedSocket, packet: Buffer): void {
  if (beginsRequest(packet)) this[LAST_REQUEST_START] = packet.toString('latin1', 0, packet.indexOf(0x0a));
}

function answer(socket: Socket, url: string, error: ProtocolError): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(renderErrorFor(url, error));
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    ...error.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
    connection: 'close',
  };
  const head = [`HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? 'Error'}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}

/** What a parser error means for the client, given the request line (when there is one to read). */
function errorFor(err: NodeJS.ErrnoException & { reason?: string }, line: RequestLine | undefined, routes: RouteIndex | undefined): ProtocolError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new HeaderFieldsTooLarge();
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestTimeout();
    case 'HPE_INVALID_METHOD':
      // A method Node's parser does not know (FOO, lower-case get) is a method this server has no route for.
      if (line && routes) return routeMiss(routes, line.method, line.target);
  }
  const reason = typeof err.reason === 'string' && /^[\w .,'-]{1,100}$/.test(err.reason) ? ` (${err.reason})` : '';
  return new InvalidInput('headers', `The request is not well-formed HTTP/1.1${reason}`);
}

export class ParserErrors {
  private routes: RouteIndex | undefined;
  private log: FastifyBaseLogger | undefined;

  /** Fastify's `clientErrorHandler`: Node's 'clientError' event, for a socket whose request could not be parsed. */
  readonly clientErrorHandler = (err: Error, socket: Socket): void => {
    const error = err as NodeJS.ErrnoException & { rawPacket?: Buffer };
    // A reset connection has no one left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const line = requestLine(error.rawPacket) ?? parseLine((socket as TrackedSocket)[LAST_REQUEST_START]);
    const protocolError = errorFor(error, line, this.routes);
    // The packet itself is not logged: it may carry credentials (Authorization, cookies).
    this.log?.debug({ code: error.code, status: protocolError.statusCode }, 'request refused by the HTTP parser');
    answer(socket, line?.target.startsWith('/') ? line.target : '/', protocolError);
  };

  /** Listens for CONNECT and remembers where requests begin, once the server and the routes exist. */
  attach(server: Server, routes: RouteIndex, log: FastifyBaseLogger): void {
    this.routes = routes;
    this.log = log;
    // A client may close its side once its request is sent (HTTP/1.1 allows it; `nc -N`, some proxies). Node
    // then ends the connection at once, before a handler that awaits anything has answered: with this, the
    // answer is sent first and the connection closed after it.
    (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    server.on(server instanceof TlsServer ? 'secureConnection' : 'connection', (socket: TrackedSocket) => socket.on('data', remember));
    // An answered request's line is no longer the one under way: a later request on the connection whose line
    // cannot be read (longer than MAX_LINE, or split over packets) is answered in the default family, not in this
    // one's (a 431 for an oversized /oidc/logout came in the Management shape after an /api/v2 call).
    server.on('request', (request: { socket: TrackedSocket; method?: string; url?: string; httpVersion: string }, response: { on(event: 'finish', listener: () => void): unknown }) => {
      // Node parses (and emits this) before `remember` sees the packet, so the line is matched at the answer.
      const own = `${request.method} ${request.url} HTTP/${request.httpVersion}`;
      response.on('finish', () => {
        const socket = request.socket;
        if (socket[LAST_REQUEST_START]?.replace(/\r$/, '') === own) delete socket[LAST_REQUEST_START];
      });
    });
    // This server is no proxy: CONNECT to a path is a method the path does not have; to an authority, a 400.
    server.on('connect', (request: { method?: string; url?: string }, socket: Socket) => {
      const target = request.url ?? '';
      const error = target.startsWith('/') ? routeMiss(routes, request.method ?? 'CONNECT', target) : new InvalidRequest('This server is not a proxy: CONNECT is not supported');
      answer(socket, target.startsWith('/') ? target : '/', error);
    });
  }
}

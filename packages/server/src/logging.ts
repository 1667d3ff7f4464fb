/**
 * pino options: JSON lines, or pino-pretty on a terminal. Secrets never reach a log line: sensitive fields are
 * redacted wherever they appear in logged objects, and the logged request URL has the values of sensitive query
 * parameters (codes, tokens, tickets) replaced.
 */
import type { FastifyRequest } from 'fastify';
import type { LoggerOptions } from 'pino';

const SECRET_FIELDS = [
  'password',
  'client_secret',
  'client_assertion',
  'secret',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'code',
  'code_verifier',
  'otp',
  'login_ticket',
  'co_verifier',
  'verifier',
  'verification_code',
  'ticket',
  'authorization',
  'cookie',
  'set-cookie',
  'private_key',
  'master_key',
];

/** Query parameters whose values are credentials or one-time secrets. */
const SECRET_QUERY_PARAMS = new Set([
  'code',
  'token',
  'access_token',
  'id_token',
  'refresh_token',
  'login_ticket',
  'client_secret',
  'client_assertion',
  'verification_code',
  'ticket',
  'otp',
]);

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  let changed = false;
  for (const key of [...params.keys()]) {
    if (SECRET_QUERY_PARAMS.has(key.toLowerCase())) {
      params.set(key, '[REDACTED]');
      changed = true;
    }
  }
  return changed ? `${url.slice(0, q)}?${params.toString()}` : url;
}

export function loggerOptions(level: string, pretty: boolean): LoggerOptions {
  return {
    level,
    redact: {
      paths: [
        ...SECRET_FIELDS.map((f) => `["${f}"]`),
        ...SECRET_FIELDS.map((f) => `*["${f}"]`),
        ...SECRET_FIELDS.map((f) => `*.*["${f}"]`),
        'req.headers.authorization',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
      ],
      censor: '[REDACTED]',
    },
    serializers: {
      // Fastify hands over its request; anything else logged under `req` passes through (and is redacted).
      req: (request: FastifyRequest) =>
        typeof request.url === 'string'
          ? { method: request.method, url: redactUrl(request.url), host: request.headers.host, remoteAddress: request.ip }
          : request,
    },
    ...(pretty && { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } }),
  };
}

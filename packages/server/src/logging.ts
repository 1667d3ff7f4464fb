/**
 * pino options: JSON lines, or pino-pretty on a terminal. Secrets never reach a log line: sensitive fields are
 * redacted wherever they appear in logged objects, the logged request URL has the values of sensitive query
 * parameters (codes, tokens, tickets, hints, signatures) replaced, and a request's headers and body are never
 * logged at all (the `req` serializer keeps the method, the redacted URL, the host and the address).
 */
import type { FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger, LoggerOptions } from 'pino';

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
  'id_token_hint',
  'logout_hint',
  'request',
  'assertion',
  'subject_token',
  'actor_token',
  'signature',
  'dpop',
  'proxy-authorization',
  'smtp_pass',
  'pass',
];

/**
 * Parameters whose values are credentials, one-time secrets or signed statements of identity: by what their
 * names contain, so that a parameter added later (`subject_token`, `logout_hint`, a link's `signature`) is
 * covered without being listed. A JWT-secured authorization request (`request`) carries the whole request.
 */
const SECRET_PARAM = /token|secret|assertion|ticket|verifier|password|passcode|otp|code|hint|signature|key|cookie|dpop|session|credential|saml/i;
const SECRET_PARAM_NAMES = new Set(['request', 'sig']);

export function isSecretParameter(name: string): boolean {
  return SECRET_PARAM.test(name) || SECRET_PARAM_NAMES.has(name.toLowerCase());
}

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  let changed = false;
  for (const key of new Set(params.keys())) {
    if (isSecretParameter(key)) {
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
        'req.headers["proxy-authorization"]',
        'req.headers.cookie',
        'req.headers.dpop',
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

type LogMethod = (...args: unknown[]) => void;
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/**
 * A request's logger, made the first time it writes a line. Fastify gives every request a pino child with its
 * request id; pino builds the child's bindings through the redaction at once, which cost more than the rest
 * of a JWKS request. Most requests never log above the configured level, so the child is made only when a
 * line is actually written (or someone asks it for more than its level).
 */
class LazyRequestLogger {
  #real: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get real(): Logger {
    return (this.#real ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#real?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return this.#real ? this.#real.isLevelEnabled(level) : this.options.level === undefined ? this.parent.isLevelEnabled(level) : this.real.isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }

  silent(): void {}
}

for (const level of LEVELS) {
  Object.defineProperty(LazyRequestLogger.prototype, level, {
    value: function (this: LazyRequestLogger, ...args: unknown[]): void {
      if (!this.isLevelEnabled(level)) return;
      (this.real[level] as LogMethod)(...args);
    },
  });
}

/** Fastify's `childLoggerFactory`: the request's logger, made lazily (LazyRequestLogger). */
export function lazyChildLoggerFactory(logger: Logger, bindings: Bindings, options: ChildLoggerOptions): Logger {
  return new LazyRequestLogger(logger, bindings, options) as unknown as Logger;
}

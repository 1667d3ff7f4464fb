/**
 * Configuration: the environment, plus an optional JSON file (GATEHOUSE_CONFIG_FILE) with the same keys.
 * Environment variables win over the file. Everything is validated once, at start, and a bad value stops
 * the process with a message that names the key and says what it should be.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { parseDevelopmentKeys, SOCIAL_PRESETS, type DevelopmentKeyRing } from './federation/development-keys.js';

export interface Config {
  port: number;
  /** The address to listen on: HOST, or loopback only when the public URL is a localhost URL, else every interface. */
  host: string;
  /** Why `host` is what it is, in words for the banner. */
  hostSource: string;
  /** The default tenant's base URL, without a trailing slash. Its issuer is this plus `/`. */
  publicUrl: string;
  /** Where `publicUrl` came from, in words for the banner and the log (`GATEHOUSE_PUBLIC_URL`, or `PORT=…`). */
  publicUrlSource: string;
  dataDir: string;
  /** `sqlite:<file>` or a `postgres://` URL. */
  databaseUrl: string;
  redisUrl: string | undefined;
  /** 32 bytes, base64 or hex; when unset it is generated into the data dir. */
  masterKey: string | undefined;
  adminClientId: string | undefined;
  adminClientSecret: string | undefined;
  tls: { certFile: string; keyFile: string } | undefined;
  workers: number;
  logLevel: string;
  /** `smtp://` or `smtps://` URL (credentials inside); unset means the dev mailbox keeps every email. Never logged. */
  smtpUrl: string | undefined;
  /** The From header of every email, e.g. `Gatehouse <no-reply@id.example.com>`. */
  emailFrom: string;
  /** Whether GET /dev/mailbox shows the kept emails (only ever without SMTP). */
  devMailbox: boolean;
  /**
   * Proxies (IPs or CIDRs) whose `X-Forwarded-For` is believed for the client IP (rate limits, attack
   * protection); empty means the socket's address is the client.
   */
  trustedProxies: string[];
  /** The SMS gateway used by sms connections that name none of their own (`gateway_url`). */
  smsGatewayUrl: string | undefined;
  /** Social presets' shared development keys (federation/development-keys.ts). Never logged. */
  developmentKeys: DevelopmentKeyRing;
  /** The largest users file POST /api/v2/jobs/users-imports (and `gatehouse users import`) accepts, in bytes. */
  importMaxBytes: number;
  /**
   * How long an idle keep-alive connection stays open, in milliseconds. Longer than the common client pools'
   * and load balancers' idle timeouts (60 s), so the server is never the side that closes a connection a
   * client is about to reuse (a reset socket mid-request).
   */
  keepAliveTimeoutMs: number;
  /**
   * SQLite's `synchronous` (WAL): `normal` survives a killed process, `full` also a power loss or OS crash
   * (every commit waits for fsync). Not used on PostgreSQL.
   */
  sqliteSynchronous: SqliteSynchronous;
  /**
   * GATEHOUSE_METRICS_TOKEN: a bearer token that lets any address read GET /metrics. Without it only loopback
   * callers may (the socket's address, never X-Forwarded-For). Never logged.
   */
  metricsToken: string | undefined;
  /**
   * OTEL_EXPORTER_OTLP_ENDPOINT: where OpenTelemetry traces go (OTLP/HTTP, `<endpoint>/v1/traces`); unset means no
   * tracing at all.
   */
  otlpEndpoint: string | undefined;
  /**
   * GATEHOUSE_TENANT_LOGS: whether tenant log events are recorded at all (logs/writer.ts). Off, nothing is
   * written: GET /api/v2/logs answers an empty list and log streams receive nothing.
   */
  tenantLogs: boolean;
}

export type SqliteSynchronous = 'normal' | 'full';

/** 65 s: above the 60 s idle timeout of the usual load balancers and client pools. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_SECONDS = 65;

/** 512 MiB: a million users with bcrypt hashes and some metadata is about 250 MB. */
export const DEFAULT_IMPORT_MAX_BYTES = 512 * 1024 * 1024;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Every key the file may carry; the environment uses the same names. */
const KEYS = [
  'PORT',
  'HOST',
  'GATEHOUSE_PUBLIC_URL',
  'GATEHOUSE_DATA_DIR',
  'DATABASE_URL',
  'REDIS_URL',
  'GATEHOUSE_MASTER_KEY',
  'GATEHOUSE_ADMIN_CLIENT_ID',
  'GATEHOUSE_ADMIN_CLIENT_SECRET',
  'GATEHOUSE_TLS_CERT',
  'GATEHOUSE_TLS_KEY',
  'GATEHOUSE_WORKERS',
  'GATEHOUSE_LOG_LEVEL',
  'GATEHOUSE_SMTP_URL',
  'GATEHOUSE_EMAIL_FROM',
  'GATEHOUSE_DEV_MAILBOX',
  'GATEHOUSE_TRUSTED_PROXIES',
  'GATEHOUSE_SMS_GATEWAY_URL',
  'GATEHOUSE_DEVELOPMENT_KEYS',
  'GATEHOUSE_IMPORT_MAX_BYTES',
  'GATEHOUSE_KEEP_ALIVE_TIMEOUT',
  'GATEHOUSE_SQLITE_SYNCHRONOUS',
  'GATEHOUSE_METRICS_TOKEN',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'GATEHOUSE_TENANT_LOGS',
] as const;
type Key = (typeof KEYS)[number];
type RawConfig = Partial<Record<Key, string>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function readFileLayer(file: string): RawConfig {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`GATEHOUSE_CONFIG_FILE ${file}: cannot read it as JSON (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`GATEHOUSE_CONFIG_FILE ${file}: expected a JSON object of configuration keys`);
  }
  const layer: RawConfig = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!(KEYS as readonly string[]).includes(key)) {
      throw new ConfigError(`GATEHOUSE_CONFIG_FILE ${file}: unknown key ${key} (known keys: ${KEYS.join(', ')})`);
    }
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new ConfigError(`GATEHOUSE_CONFIG_FILE ${file}: ${key} must be a string or a number`);
    }
    layer[key as Key] = String(value);
  }
  return layer;
}

function integer(key: Key, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${key}=${raw}: expected a whole number from ${min} to ${max}`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${key}=${raw}: expected a whole number from ${min} to ${max}`);
  return value;
}

function publicUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`GATEHOUSE_PUBLIC_URL=${raw}: expected an absolute http(s) URL such as https://id.example.com`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`GATEHOUSE_PUBLIC_URL=${raw}: the scheme must be http or https`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`GATEHOUSE_PUBLIC_URL=${raw}: no query, fragment or credentials allowed`);
  }
  if (url.pathname !== '/') {
    // The issuer is the origin plus `/`; a path prefix would need every endpoint mounted under it.
    throw new ConfigError(`GATEHOUSE_PUBLIC_URL=${raw}: a path is not supported; use the bare origin`);
  }
  return url.origin;
}

function databaseUrl(raw: string | undefined, dataDir: string): string {
  if (raw === undefined || raw === '') return `sqlite:${path.join(dataDir, 'gatehouse.sqlite')}`;
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError('DATABASE_URL: not a valid postgres:// URL');
    }
    return raw;
  }
  if (raw.startsWith('sqlite:')) return raw;
  throw new ConfigError('DATABASE_URL: expected postgres://… (PostgreSQL) or sqlite:<file> (embedded SQLite)');
}

function masterKey(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (decodeMasterKey(raw) === undefined) {
    throw new ConfigError('GATEHOUSE_MASTER_KEY: expected 32 bytes as 64 hex digits or base64 (openssl rand -base64 32)');
  }
  return raw;
}

/** A master key is 32 bytes, written as hex or base64. Returns undefined for anything else. */
export function decodeMasterKey(raw: string): Buffer | undefined {
  const text = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) {
    const bytes = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    return bytes.length === 32 ? bytes : undefined;
  }
  return undefined;
}

/** Checks an SMTP URL without ever echoing it: it carries the mail server's password. */
function smtpUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('GATEHOUSE_SMTP_URL: expected smtp://user:password@host:587 or smtps://user:password@host:465');
  }
  if ((url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || !url.hostname) {
    throw new ConfigError('GATEHOUSE_SMTP_URL: the scheme must be smtp (STARTTLS when offered) or smtps (TLS from the start), with a host');
  }
  return raw;
}

function emailFrom(raw: string | undefined, publicUrlValue: string): string {
  if (raw === undefined || raw === '') return `Gatehouse <no-reply@${new URL(publicUrlValue).hostname}>`;
  // A bare address or `Name <address>`; line breaks would let the value inject headers.
  if (/[\r\n]/.test(raw) || !/^(?:[^<>@]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(raw.trim())) {
    throw new ConfigError(`GATEHOUSE_EMAIL_FROM=${raw}: expected an address such as no-reply@id.example.com or "Gatehouse <no-reply@id.example.com>"`);
  }
  return raw.trim();
}

/**
 * The dev mailbox page shows reset and verification links to anyone who can reach it, so it is on by default
 * only for a loopback public URL (a newcomer's `npm start`) and never when SMTP delivers the mail.
 */
function devMailbox(raw: string | undefined, smtp: string | undefined, publicUrlValue: string): boolean {
  if (raw !== undefined && !['0', '1', 'true', 'false'].includes(raw)) {
    throw new ConfigError(`GATEHOUSE_DEV_MAILBOX=${raw}: expected 1 or 0`);
  }
  const wanted = raw === '1' || raw === 'true';
  if (wanted && smtp) throw new ConfigError('GATEHOUSE_DEV_MAILBOX=1 cannot be combined with GATEHOUSE_SMTP_URL: mail goes to the SMTP server');
  if (smtp || raw === '0' || raw === 'false') return false;
  if (wanted) return true;
  return isLoopbackUrl(publicUrlValue);
}

/** Whether a URL names this machine only: localhost (and its subdomains), 127.0.0.0/8 or ::1. */
export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Reads and validates the configuration.
 * @param env the environment (process.env in production; a plain object in tests)
 * @param overrides values that win over both layers (the CLI's `--https`, tests' ephemeral ports)
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const fileLayer = env.GATEHOUSE_CONFIG_FILE ? readFileLayer(env.GATEHOUSE_CONFIG_FILE) : {};
  const raw = (key: Key): string | undefined => {
    const value = env[key];
    return value !== undefined && value !== '' ? value : fileLayer[key];
  };

  const port = overrides.port ?? integer('PORT', raw('PORT') ?? '3000', 0, 65535);
  const dataDir = path.resolve(overrides.dataDir ?? raw('GATEHOUSE_DATA_DIR') ?? './data');

  const certFile = raw('GATEHOUSE_TLS_CERT');
  const keyFile = raw('GATEHOUSE_TLS_KEY');
  if (Boolean(certFile) !== Boolean(keyFile)) {
    throw new ConfigError('GATEHOUSE_TLS_CERT and GATEHOUSE_TLS_KEY must be set together');
  }
  const tls = overrides.tls ?? (certFile && keyFile ? { certFile, keyFile } : undefined);
  const scheme = tls ? 'https' : 'http';

  const logLevel = overrides.logLevel ?? raw('GATEHOUSE_LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`GATEHOUSE_LOG_LEVEL=${logLevel}: expected one of ${LOG_LEVELS.join(', ')}`);
  }

  const adminClientId = raw('GATEHOUSE_ADMIN_CLIENT_ID');
  const adminClientSecret = raw('GATEHOUSE_ADMIN_CLIENT_SECRET');
  if (Boolean(adminClientId) !== Boolean(adminClientSecret)) {
    throw new ConfigError('GATEHOUSE_ADMIN_CLIENT_ID and GATEHOUSE_ADMIN_CLIENT_SECRET must be set together');
  }
  if (adminClientId !== undefined && !/^[A-Za-z0-9_-]{8,64}$/.test(adminClientId)) {
    throw new ConfigError('GATEHOUSE_ADMIN_CLIENT_ID: 8 to 64 letters, digits, "-" or "_"');
  }
  if (adminClientSecret !== undefined && adminClientSecret.length < 32) {
    throw new ConfigError('GATEHOUSE_ADMIN_CLIENT_SECRET: at least 32 characters');
  }

  const redisUrl = raw('REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL: expected redis://… or rediss://…');
  }

  const explicitPublicUrl = overrides.publicUrl ?? raw('GATEHOUSE_PUBLIC_URL');
  const resolvedPublicUrl = overrides.publicUrl ?? publicUrl(explicitPublicUrl ?? `${scheme}://localhost:${port}`);
  const publicUrlSource = explicitPublicUrl
    ? 'GATEHOUSE_PUBLIC_URL'
    : `no GATEHOUSE_PUBLIC_URL: localhost and ${raw('PORT') !== undefined || overrides.port !== undefined ? `PORT=${port}` : `the default port ${port}`}`;
  // A localhost public URL means one machine: the server (and its dev mailbox) stays off the network unless
  // HOST says otherwise (issue #19: the mailbox was readable from another machine).
  const explicitHost = overrides.host ?? raw('HOST');
  const loopbackOnly = explicitHost === undefined && isLoopbackUrl(resolvedPublicUrl);
  const host = explicitHost ?? (loopbackOnly ? '127.0.0.1' : '0.0.0.0');
  const hostSource =
    explicitHost !== undefined
      ? `HOST=${explicitHost}`
      : loopbackOnly
        ? 'loopback only, as the public URL is a localhost URL; set HOST=0.0.0.0 to listen on every interface'
        : 'every interface; set HOST to choose one';
  const smtp = overrides.smtpUrl ?? smtpUrl(raw('GATEHOUSE_SMTP_URL'));

  return {
    port,
    host,
    hostSource,
    publicUrl: resolvedPublicUrl,
    publicUrlSource,
    dataDir,
    databaseUrl: overrides.databaseUrl ?? databaseUrl(raw('DATABASE_URL'), dataDir),
    redisUrl: overrides.redisUrl ?? redisUrl,
    masterKey: overrides.masterKey ?? masterKey(raw('GATEHOUSE_MASTER_KEY')),
    adminClientId: overrides.adminClientId ?? adminClientId,
    adminClientSecret: overrides.adminClientSecret ?? adminClientSecret,
    tls,
    workers: overrides.workers ?? integer('GATEHOUSE_WORKERS', raw('GATEHOUSE_WORKERS') ?? '1', 1, 64),
    logLevel,
    smtpUrl: smtp,
    emailFrom: overrides.emailFrom ?? emailFrom(raw('GATEHOUSE_EMAIL_FROM'), resolvedPublicUrl),
    devMailbox: overrides.devMailbox ?? devMailbox(raw('GATEHOUSE_DEV_MAILBOX'), smtp, resolvedPublicUrl),
    trustedProxies: overrides.trustedProxies ?? trustedProxies(raw('GATEHOUSE_TRUSTED_PROXIES')),
    smsGatewayUrl: overrides.smsGatewayUrl ?? smsGatewayUrl(raw('GATEHOUSE_SMS_GATEWAY_URL')),
    developmentKeys: overrides.developmentKeys ?? developmentKeys(raw('GATEHOUSE_DEVELOPMENT_KEYS')),
    importMaxBytes:
      overrides.importMaxBytes ?? integer('GATEHOUSE_IMPORT_MAX_BYTES', raw('GATEHOUSE_IMPORT_MAX_BYTES') ?? String(DEFAULT_IMPORT_MAX_BYTES), 1024, 16 * 1024 ** 3),
    keepAliveTimeoutMs:
      overrides.keepAliveTimeoutMs ??
      1000 * integer('GATEHOUSE_KEEP_ALIVE_TIMEOUT', raw('GATEHOUSE_KEEP_ALIVE_TIMEOUT') ?? String(DEFAULT_KEEP_ALIVE_TIMEOUT_SECONDS), 1, 3600),
    sqliteSynchronous: overrides.sqliteSynchronous ?? sqliteSynchronous(raw('GATEHOUSE_SQLITE_SYNCHRONOUS')),
    metricsToken: overrides.metricsToken ?? metricsToken(raw('GATEHOUSE_METRICS_TOKEN')),
    otlpEndpoint: overrides.otlpEndpoint ?? otlpEndpoint(raw('OTEL_EXPORTER_OTLP_ENDPOINT')),
    tenantLogs: overrides.tenantLogs ?? tenantLogs(raw('GATEHOUSE_TENANT_LOGS')),
  };
}

function tenantLogs(value: string | undefined): boolean {
  const chosen = (value ?? 'on').trim().toLowerCase();
  if (chosen !== 'on' && chosen !== 'off') throw new ConfigError(`GATEHOUSE_TENANT_LOGS=${value}: expected on or off`);
  return chosen === 'on';
}

function otlpEndpoint(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('OTEL_EXPORTER_OTLP_ENDPOINT: expected an http(s) URL such as http://collector:4318');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigError('OTEL_EXPORTER_OTLP_ENDPOINT: the scheme must be http or https');
  return value;
}

function metricsToken(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  // The message never repeats the value.
  if (value.length < 16 || !/^[\x21-\x7e]+$/.test(value)) throw new ConfigError('GATEHOUSE_METRICS_TOKEN: at least 16 printable characters, no spaces');
  return value;
}

function developmentKeys(value: string | undefined): DevelopmentKeyRing {
  const parsed = parseDevelopmentKeys(value, SOCIAL_PRESETS);
  if (typeof parsed === 'string') throw new ConfigError(parsed);
  return parsed;
}

function sqliteSynchronous(value: string | undefined): SqliteSynchronous {
  const chosen = (value ?? 'normal').trim().toLowerCase();
  if (chosen !== 'normal' && chosen !== 'full') throw new ConfigError(`GATEHOUSE_SQLITE_SYNCHRONOUS=${value}: expected normal or full`);
  return chosen;
}

/** `10.0.0.1, 10.1.0.0/16, ::1`: each an IP address, optionally with a prefix length. */
function trustedProxies(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [];
  return value.split(',').map((entry) => {
    const item = entry.trim();
    const [address = '', prefix] = item.split('/');
    const family = isIP(address);
    const bits = family === 6 ? 128 : 32;
    if (family === 0 || (prefix !== undefined && (!/^\d{1,3}$/.test(prefix) || Number(prefix) > bits))) {
      throw new ConfigError(`GATEHOUSE_TRUSTED_PROXIES: "${item}" is not an IP address or CIDR range (e.g. 10.0.0.1 or 10.0.0.0/8)`);
    }
    return item;
  });
}

function smsGatewayUrl(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('GATEHOUSE_SMS_GATEWAY_URL: expected an http(s) URL such as https://sms.example.com/send');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigError('GATEHOUSE_SMS_GATEWAY_URL: the scheme must be http or https');
  return url.href;
}

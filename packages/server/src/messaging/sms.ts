/**
 * SMS for passwordless `sms` connections. With a `gateway_url` (provider `sms_gateway`), the message is
 * POSTed there as JSON `{recipient, body, sender}` (Auth0's custom-gateway payload; with `forward_req_info`
 * also `req: {ip, user_agent}`), with `Authorization: Bearer <HS256 JWT>` when `gateway_authentication` is set
 * (sub and aud from it, signed with its secret). Provider `twilio` is refused (not implemented). Without a
 * gateway the dev sink keeps the last messages in memory and logs only that one was sent, never its text.
 *
 * Connection secrets (`twilio_token`, `gateway_authentication.secret`) are sealed at rest and never shown by
 * the Management API; the helpers for that are here, beside the one place that opens them.
 */
import { SignJWT } from 'jose';
import type { FastifyBaseLogger } from 'fastify';
import type { Sealer } from '../crypto/sealing.js';
import type { Connection } from '../store/connections.js';
import type { Tenant } from '../store/tenants.js';

export interface OutgoingSms {
  tenant: Tenant;
  /** E.164. */
  to: string;
  body: string;
}

export interface GatewayAuthentication {
  method?: string;
  subject?: string;
  audience?: string;
  secret?: string;
  secret_base64_encoded?: boolean;
}

interface SmsConnectionOptions {
  provider?: string;
  gateway_url?: string;
  gateway_authentication?: GatewayAuthentication | null;
  from?: string;
  forward_req_info?: boolean;
}

/** The gateway refused or could not be reached; /passwordless/start answers 400 (as the reference does). */
export class SmsDeliveryError extends Error {
  override name = 'SmsDeliveryError';
  /** @param status the gateway's HTTP status; undefined when unreachable; 'unsupported' for a provider this server lacks */
  constructor(readonly status: number | 'unsupported' | undefined) {
    super(status === undefined ? 'the SMS gateway could not be reached' : `the SMS gateway answered ${status}`);
  }
}

const GATEWAY_TIMEOUT_MS = 10_000;
const DEV_SINK_SIZE = 50;

export interface DevSms {
  tenantId: string;
  to: string;
  body: string;
  sentAt: number;
}

const devSink: DevSms[] = [];

/** The last messages the dev sink took (newest last), for a dev mailbox page. */
export function devSmsMessages(tenantId?: string): readonly DevSms[] {
  return tenantId === undefined ? [...devSink] : devSink.filter((m) => m.tenantId === tenantId);
}

// ---- sealed connection secrets ----

type SecretPath = 'twilio_token' | 'gateway_authentication.secret';
/** Sealed values are stored under these keys; the plain keys never reach storage. */
const SEALED_KEY = { twilio_token: 'twilio_token_sealed', 'gateway_authentication.secret': 'secret_sealed' } as const;

function secretContext(connectionId: string, path: SecretPath): string {
  return `connection_secret:${connectionId}:${path}`;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * `options` as stored: each secret sent is sealed; a secret not sent keeps its sealed value from `previous`
 * (write-only fields: a client that reads the connection and writes it back does not wipe them).
 */
export function sealConnectionSecrets(sealer: Sealer, connectionId: string, options: Record<string, unknown>, previous?: Record<string, unknown>): Record<string, unknown> {
  const { twilio_token, [SEALED_KEY.twilio_token]: _sentSealed, ...out } = options;
  if (typeof twilio_token === 'string' && twilio_token !== '') {
    out[SEALED_KEY.twilio_token] = sealer.seal(twilio_token, secretContext(connectionId, 'twilio_token'));
  } else if (twilio_token === undefined && typeof previous?.[SEALED_KEY.twilio_token] === 'string') {
    out[SEALED_KEY.twilio_token] = previous[SEALED_KEY.twilio_token];
  }
  const auth = record(out.gateway_authentication);
  if (auth) {
    const { secret, secret_sealed: _sealed, ...fields } = auth;
    const previousAuth = record(previous?.gateway_authentication);
    const sealedKey = SEALED_KEY['gateway_authentication.secret'];
    if (typeof secret === 'string' && secret !== '') {
      out.gateway_authentication = { ...fields, [sealedKey]: sealer.seal(secret, secretContext(connectionId, 'gateway_authentication.secret')) };
    } else if (secret === undefined && typeof previousAuth?.[sealedKey] === 'string') {
      out.gateway_authentication = { ...fields, [sealedKey]: previousAuth[sealedKey] };
    } else {
      out.gateway_authentication = fields;
    }
  }
  return out;
}

/** `options` as the Management API shows them: sealed secrets left out. */
export function withoutConnectionSecrets(options: Record<string, unknown>): Record<string, unknown> {
  const { [SEALED_KEY.twilio_token]: _token, twilio_token: _plain, ...out } = options;
  const auth = record(out.gateway_authentication);
  if (auth) {
    const { [SEALED_KEY['gateway_authentication.secret']]: _secret, secret: _plainSecret, ...fields } = auth;
    out.gateway_authentication = fields;
  }
  return out;
}

function gatewaySecret(sealer: Sealer, connection: Connection, auth: Record<string, unknown>): string | undefined {
  const sealed = auth[SEALED_KEY['gateway_authentication.secret']];
  if (typeof sealed === 'string') return sealer.unseal(sealed, secretContext(connection.id, 'gateway_authentication.secret'));
  return undefined;
}

// ---- sending ----

async function bearerToken(auth: GatewayAuthentication, secret: string): Promise<string> {
  const key = auth.secret_base64_encoded ? Buffer.from(secret, 'base64url') : Buffer.from(secret, 'utf8');
  let jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().setExpirationTime('5m');
  if (auth.subject) jwt = jwt.setSubject(auth.subject);
  if (auth.audience) jwt = jwt.setAudience(auth.audience);
  return jwt.sign(key);
}

/** Masks all but the last two digits, for logs. */
export function maskPhoneNumber(phone: string): string {
  return phone.length <= 2 ? '**' : `${'*'.repeat(phone.length - 2)}${phone.slice(-2)}`;
}

export async function sendSms(
  services: { sealer: Sealer; config?: { smsGatewayUrl?: string | undefined } },
  connection: Connection,
  message: OutgoingSms,
  context: { log: FastifyBaseLogger; ip?: string; userAgent?: string },
): Promise<void> {
  const options = connection.options as SmsConnectionOptions;
  // Twilio's own API is not spoken here: fail loudly rather than let codes vanish into the dev sink.
  if (options.provider === 'twilio') throw new SmsDeliveryError('unsupported');
  // The connection's own gateway, else the server-wide one (GATEHOUSE_SMS_GATEWAY_URL), else the dev sink.
  const gatewayUrl = options.gateway_url ?? services.config?.smsGatewayUrl;
  if (!gatewayUrl) {
    devSink.push({ tenantId: message.tenant.id, to: message.to, body: message.body, sentAt: Date.now() });
    if (devSink.length > DEV_SINK_SIZE) devSink.splice(0, devSink.length - DEV_SINK_SIZE);
    context.log.info({ to: maskPhoneNumber(message.to), connection: connection.name }, 'SMS kept by the dev sink (no gateway configured)');
    return;
  }
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const auth = record(options.gateway_authentication);
  if (auth) {
    const secret = gatewaySecret(services.sealer, connection, auth);
    if (secret) headers.authorization = `Bearer ${await bearerToken(auth as GatewayAuthentication, secret)}`;
  }
  const body = {
    recipient: message.to,
    body: message.body,
    sender: options.from ?? '',
    ...(options.forward_req_info && { req: { ip: context.ip ?? null, user_agent: context.userAgent ?? null } }),
  };
  let response: Response;
  try {
    response = await fetch(gatewayUrl, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(GATEWAY_TIMEOUT_MS), redirect: 'error' });
  } catch {
    context.log.warn({ connection: connection.name }, 'SMS gateway unreachable');
    throw new SmsDeliveryError(undefined);
  }
  // Only the status counts; the body is drained unread.
  await response.body?.cancel();
  if (response.status !== 200 && response.status !== 201 && response.status !== 202 && response.status !== 204) {
    context.log.warn({ connection: connection.name, status: response.status }, 'SMS gateway refused the message');
    throw new SmsDeliveryError(response.status);
  }
}

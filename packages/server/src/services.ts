/** What route modules are given: the app with its schema type provider, and the server's long-lived services. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { Config } from './config.js';
import type { KeyRing } from './crypto/key-ring.js';
import type { Sealer } from './crypto/sealing.js';
import type { RateLimitStore } from './http/rate-limit/store.js';
import type { AttackProtection } from './protection/attack-protection.js';
import type { AttackCounterStore } from './protection/counter-store.js';
import type { Mailer } from './messaging/mailer.js';
import type { TenantLogWriter } from './logs/writer.js';
import type { Store } from './store/db.js';
import type { ClientOrigins } from './tenancy/client-origins.js';
import type { ChangeBus } from './tenancy/change-bus.js';
import type { ConfigCache } from './tenancy/config-cache.js';
import type { TenantResolver } from './tenancy/tenant-resolver.js';
import type { Tracing } from './tracing/traces.js';

export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface Services {
  config: Config;
  store: Store;
  sealer: Sealer;
  keyRing: KeyRing;
  tenants: TenantResolver;
  rateLimitStore: RateLimitStore;
  clientOrigins: ClientOrigins;
  configCache: ConfigCache;
  /** Brute-force, suspicious-IP and breached-password checks of the sign-in flows (protection/). */
  attackProtection: AttackProtection;
  /** DPoP proof ids seen (`jti`, single use, crypto/dpop.ts): shared by every node when Redis is configured. */
  proofReplay: AttackCounterStore;
  /** Email: queued, then sent over SMTP or kept in the dev mailbox (messaging/mailer.ts). */
  mailer: Mailer;
  /** Tells every node that a tenant's configuration changed, and drops this node's copies when told (tenancy/change-bus.ts). */
  changes: ChangeBus;
  /** Tenant log events: batched writes of outcomes, and retention (logs/writer.ts). */
  tenantLogs: TenantLogWriter;
  /** OpenTelemetry traces, only when configured (tracing/traces.ts). */
  tracing?: Tracing;
}

/**
 * The configuration a token request reads on every call (the client, the API, the client grant), and what other
 * hot paths remember through `remember` (the connection a login uses), cached per tenant in this process.
 * Profiling showed these lookups (SQL plus parsing the API's scope list) cost more than everything else a token
 * request does except the RSA signature.
 *  - Any successful Management API write drops the tenant's entries on every node before its response is sent
 *    (management/index.ts, tenancy/change-bus.ts), so a caller's next request, on any node, sees the change.
 *  - CACHE_MS bounds how stale a copy can be if the carrier between nodes loses messages.
 */
import type { Kysely } from 'kysely';
import { findClientGrant, type ClientGrant } from '../store/client-grants.js';
import { findClient, type Client } from '../store/clients.js';
import { listConnections, type Connection } from '../store/connections.js';
import { findResourceServerByIdentifier, type ResourceServer } from '../store/resource-servers.js';
import type { Database } from '../store/schema.js';

const CACHE_MS = 5_000;
const MAX_ENTRIES_PER_TENANT = 10_000;

interface Entry {
  value: Promise<unknown>;
  at: number;
}

export class ConfigCache {
  readonly #tenants = new Map<string, Map<string, Entry>>();

  constructor(private readonly db: Kysely<Database>) {}

  client(tenantId: string, clientId: string): Promise<Client | undefined> {
    return this.#get(tenantId, `client\u0000${clientId}`, () => findClient(this.db, tenantId, clientId));
  }

  resourceServer(tenantId: string, identifier: string): Promise<ResourceServer | undefined> {
    return this.#get(tenantId, `api\u0000${identifier}`, () => findResourceServerByIdentifier(this.db, tenantId, identifier));
  }

  clientGrant(tenantId: string, clientId: string, audience: string): Promise<ClientGrant | undefined> {
    return this.#get(tenantId, `grant\u0000${clientId}\u0000${audience}`, () => findClientGrant(this.db, tenantId, clientId, audience));
  }

  /** The tenant's connections, oldest first: the login page reads them up to three times (buttons, home realm). */
  connections(tenantId: string): Promise<readonly Connection[]> {
    return this.#get(tenantId, 'connections', () => listConnections(this.db, tenantId));
  }

  /**
   * Any other per-tenant configuration a hot path reads, under `key` (which names what it is and everything it
   * depends on), with the same lifetime and invalidation as the rest.
   */
  remember<T>(tenantId: string, key: string, load: () => Promise<T>): Promise<T> {
    return this.#get(tenantId, `other\u0000${key}`, load);
  }

  invalidate(tenantId?: string): void {
    if (tenantId === undefined) this.#tenants.clear();
    else this.#tenants.delete(tenantId);
  }

  #get<T>(tenantId: string, key: string, load: () => Promise<T>): Promise<T> {
    let entries = this.#tenants.get(tenantId);
    if (!entries) this.#tenants.set(tenantId, (entries = new Map()));
    const hit = entries.get(key);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.value as Promise<T>;
    if (entries.size >= MAX_ENTRIES_PER_TENANT) entries.clear();
    const value = load();
    entries.set(key, { value, at: Date.now() });
    // A failed lookup must not be remembered.
    value.catch(() => entries.delete(key));
    return value;
  }
}

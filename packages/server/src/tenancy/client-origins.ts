/**
 * Origins a tenant's clients allow for browser calls (`allowed_origins` and `web_origins`), for CORS on
 * endpoints where the request's client is not known before the body is read (preflights have no body).
 * Cached briefly per tenant; a change made through the Management API invalidates this process's copy.
 */
import type { Kysely } from 'kysely';
import { listClients } from '../store/clients.js';
import type { Database } from '../store/schema.js';

const CACHE_MS = 5_000;

export class ClientOrigins {
  readonly #cache = new Map<string, { origins: Set<string>; at: number }>();

  constructor(private readonly db: Kysely<Database>) {}

  async allows(tenantId: string, origin: string): Promise<boolean> {
    let entry = this.#cache.get(tenantId);
    if (!entry || Date.now() - entry.at > CACHE_MS) {
      const origins = new Set<string>();
      for (const client of await listClients(this.db, tenantId)) {
        for (const url of [...client.allowed_origins, ...client.web_origins]) origins.add(url.replace(/\/$/, ''));
      }
      entry = { origins, at: Date.now() };
      this.#cache.set(tenantId, entry);
    }
    return entry.origins.has(origin);
  }

  invalidate(tenantId?: string): void {
    if (tenantId) this.#cache.delete(tenantId);
    else this.#cache.clear();
  }
}

/**
 * Home-realm discovery (identifier first): an email whose domain is one of an enterprise connection's
 * `domain_aliases` belongs to that connection's identity provider, so the login page sends it there instead of
 * asking for a password here.
 */
import type { Services } from '../services.js';
import { listEnabledClientsByConnection, type Connection } from '../store/connections.js';
import { federationStrategy } from './strategies.js';

function domainOf(identifier: string): string | undefined {
  const at = identifier.lastIndexOf('@');
  return at > 0 && at < identifier.length - 1 ? identifier.slice(at + 1).toLowerCase() : undefined;
}

/** The enterprise connection enabled for the client whose `domain_aliases` hold the identifier's domain. */
export async function homeRealmOf(services: Services, tenantId: string, clientId: string, identifier: string): Promise<Connection | undefined> {
  const domain = domainOf(identifier.trim());
  if (!domain) return undefined;
  const enterprise = (await services.configCache.connections(tenantId)).filter((c) => {
    const strategy = federationStrategy(c.strategy);
    const aliases = c.options.domain_aliases;
    return strategy && !strategy.isSocial && Array.isArray(aliases) && aliases.some((a) => typeof a === 'string' && a.toLowerCase() === domain);
  });
  if (enterprise.length === 0) return undefined;
  const enabled = await listEnabledClientsByConnection(services.store.db, tenantId);
  return enterprise.find((c) => enabled.get(c.id)?.includes(clientId));
}

/**
 * The origins of the identity providers the client's enterprise connections route emails to by domain; empty
 * when none does. The login page lets an email alone through then, and its CSP `form-action` must allow the
 * redirect to them (Chromium applies it to the redirects after a form's POST).
 */
export async function homeRealmOrigins(services: Services, tenantId: string, clientId: string): Promise<string[]> {
  const enterprise = (await services.configCache.connections(tenantId)).filter((c) => {
    const strategy = federationStrategy(c.strategy);
    return strategy && !strategy.isSocial && Array.isArray(c.options.domain_aliases) && c.options.domain_aliases.length > 0;
  });
  if (enterprise.length === 0) return [];
  const enabled = await listEnabledClientsByConnection(services.store.db, tenantId);
  const origins = new Set<string>();
  for (const connection of enterprise.filter((c) => enabled.get(c.id)?.includes(clientId))) {
    for (const key of ['authorization_endpoint', 'authorizationURL', 'signInEndpoint', 'discovery_url', 'issuer']) {
      const value = connection.options[key];
      if (typeof value !== 'string') continue;
      try {
        origins.add(new URL(value).origin);
      } catch {
        // Not a URL: nothing to allow.
      }
    }
  }
  return [...origins];
}

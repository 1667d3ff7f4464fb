/**
 * What every Management API route spreads into its options: its scopes (checked by authenticate.ts and
 * written into the OpenAPI document) and the tenant-wide management rate limit.
 *
 *   api.get('/clients', { ...operation(['read:clients'], { summary, querystring, response }), handler })
 */
import type { RateLimitRule } from '../http/rate-limit/buckets.js';
import { isManagementScope } from './scopes.js';

export const MANAGEMENT_SECURITY_SCHEME = 'managementApiToken';
export const MANAGEMENT_RATE_LIMIT: RateLimitRule = {
  bucket: 'management',
  key: (request) => request.principal.clientId,
  afterAuthentication: true,
};

export function operation<S extends { summary: string; tags?: string[] }>(scopes: readonly string[], schema: S) {
  const unknown = scopes.filter((s) => !isManagementScope(s));
  if (scopes.length === 0 || unknown.length > 0) throw new Error(`operation "${schema.summary}": unknown scopes ${unknown.join(', ')}`);
  return {
    schema: {
      ...schema,
      tags: schema.tags ?? ['management'],
      security: [{ [MANAGEMENT_SECURITY_SCHEME]: [...scopes] }],
      description: `Scopes (any one): ${scopes.join(', ')}`,
    } as S,
    config: { scopes, rateLimit: MANAGEMENT_RATE_LIMIT },
  };
}

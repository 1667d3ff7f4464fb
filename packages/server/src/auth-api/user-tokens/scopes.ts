/**
 * Which scopes a user may grant a client for an API, as Auth0 decides them:
 *  - OIDC scopes (openid, profile, email) pass through; offline_access only when the client may use refresh
 *    tokens and, with an API, the API allows offline access;
 *  - an unknown API is refused (access_denied "Service not found: <aud>");
 *  - for an API with RBAC (`enforce_policies`), only the requested scopes the user holds through its roles;
 *    otherwise the requested scopes the API defines;
 *  - the Management API only for first-party clients, and only its current-user scopes (library rule 7);
 *  - any other requested scope is dropped silently, never an error.
 */
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import { listRolePermissions, listUserRoles } from '../../store/roles.js';
import type { Tenant } from '../../store/tenants.js';
import type { User } from '../../store/users.js';
import { managementAudience } from '../../tenancy/bootstrap.js';
import { CURRENT_USER_SCOPES } from '../../management/client-grants.js';
import { AccessDenied } from '../errors.js';
import { OIDC_SCOPES } from './claims.js';

/** The audience of access tokens that are good for /userinfo only. */
export function userinfoAudience(tenant: Pick<Tenant, 'issuer'>): string {
  return `${tenant.issuer}userinfo`;
}

/** The scope parameter as a list without repeats, in the order asked. */
export function parseScope(scope: string | undefined | null): string[] {
  return [...new Set((scope ?? '').split(/\s+/).filter(Boolean))];
}

/** The permissions the user holds for the API through its roles. */
export async function userPermissions(services: Services, tenant: Tenant, user: User, audience: string): Promise<Set<string>> {
  const roles = await listUserRoles(services.store.db, tenant.id, user.user_id);
  const permissions = await listRolePermissions(
    services.store.db,
    tenant.id,
    roles.map((r) => r.id),
  );
  return new Set(permissions.filter((p) => p.resource_server_identifier === audience).map((p) => p.permission_name));
}

/** The scopes the user may grant this client for `audience` (null/empty = only OIDC scopes). Throws protocol errors (AccessDenied "Service not found: …", …). */
export async function resolveUserScopes(
  services: Services,
  input: { tenant: Tenant; client: Client; user: User; requestedScope: string; audience?: string | null },
): Promise<{ scopes: string[]; audience: string | null }> {
  const { tenant, client, user } = input;
  const requested = parseScope(input.requestedScope);
  // Asking for the userinfo audience by name is the same as asking for no API.
  const audience = input.audience && input.audience !== userinfoAudience(tenant) ? input.audience : null;
  const refreshAllowed = client.grant_types.includes('refresh_token');

  if (audience === null) {
    const scopes = requested.filter((s) => OIDC_SCOPES.has(s) && (s !== 'offline_access' || refreshAllowed));
    return { scopes, audience: null };
  }

  const api = await services.configCache.resourceServer(tenant.id, audience);
  if (!api) throw new AccessDenied(`Service not found: ${audience}`);
  const oidc = requested.filter((s) => OIDC_SCOPES.has(s) && (s !== 'offline_access' || (refreshAllowed && api.allow_offline_access)));

  let allowed: (scope: string) => boolean;
  if (audience === managementAudience(tenant)) {
    if (!client.is_first_party) throw new AccessDenied(`Client is not authorized to access "${audience}"`);
    allowed = (s) => CURRENT_USER_SCOPES.includes(s);
  } else if (api.enforce_policies === true) {
    const held = await userPermissions(services, tenant, user, audience);
    allowed = (s) => held.has(s);
  } else {
    const defined = new Set(api.scopes.map((s) => s.value));
    allowed = (s) => defined.has(s);
  }
  const apiScopes = requested.filter((s) => !OIDC_SCOPES.has(s) && allowed(s));
  return { scopes: [...oidc, ...apiScopes], audience };
}

/**
 * grant_type=client_credentials (RFC 6749 §4.4): a confidential client gets an access token for an API
 * (`audience`) it holds a client grant for. `scope` may narrow the granted scopes; asking for one that was not
 * granted is an error, never silently dropped.
 *
 * `organization` (an organization's id or name) asks for a token scoped to it (`org_id`), as the grant allows:
 * its `organization_usage` is `deny` (the default: no organization), `allow` (optional) or `require`; and the
 * organization must be associated with the grant (POST /organizations/{id}/client-grants) unless the grant has
 * `allow_any_organization`.
 */
import { signAccessToken } from '../../crypto/jwt.js';
import { InvalidRequest } from '../../http/errors.js';
import { authenticateClient } from '../client-auth/index.js';
import { binding, requireProofForApi, senderConstraint } from '../sender-constraint.js';
import type { Services } from '../../services.js';
import type { ClientGrant } from '../../store/client-grants.js';
import { organizationHasClientGrant } from '../../store/organization-client-grants.js';
import { findOrganization, findOrganizationByName } from '../../store/organizations.js';
import { AccessDenied, InvalidScope, UnauthorizedClient } from '../errors.js';
import { optionalString } from './params.js';
import type { GrantHandler } from './types.js';

/** The organization the token is for (its id), or undefined for none, as the grant allows; throws otherwise. */
async function grantedOrganization(services: Services, tenantId: string, grant: ClientGrant, asked: string | undefined): Promise<string | undefined> {
  const usage = grant.organization_usage ?? 'deny';
  if (asked === undefined) {
    if (usage === 'require') throw new InvalidRequest('organization is required: the client grant for this API requires one (organization_usage: require)');
    return undefined;
  }
  if (usage === 'deny') throw new InvalidRequest('organization is not allowed: the client grant for this API does not use organizations (organization_usage: deny)');
  const db = services.store.db;
  const organization = asked.startsWith('org_') ? await findOrganization(db, tenantId, asked) : await findOrganizationByName(db, tenantId, asked.toLowerCase());
  // One answer for an unknown organization and one the grant may not use: the client learns nothing of the others.
  if (!organization || !(grant.allow_any_organization === true || (await organizationHasClientGrant(db, tenantId, organization.id, grant.id)))) {
    throw new AccessDenied('The client is not authorized to access this organization');
  }
  return organization.id;
}

export const clientCredentials: GrantHandler = async ({ request, params, services, endpointUrl, proof }) => {
  const tenant = request.tenant;
  const client = await authenticateClient(request, params, services, { allowPublic: false, endpointUrl });
  if (!client.grant_types.includes('client_credentials')) {
    throw new UnauthorizedClient("Grant type 'client_credentials' not allowed for the client.");
  }
  const confirmation = senderConstraint(request, client, proof);
  const bound = binding(confirmation);
  const audience = (typeof params.audience === 'string' && params.audience) || tenant.settings.default_audience;
  if (!audience) throw new InvalidRequest('audience is required (no default audience is configured)');

  const api = await services.configCache.resourceServer(tenant.id, audience);
  if (!api) throw new AccessDenied(`Service not found: ${audience}`);
  const grant = await services.configCache.clientGrant(tenant.id, client.client_id, audience);
  if (!grant) {
    throw new AccessDenied(`Client is not authorized to access "${audience}". You need to create a "client-grant" associated to this API.`);
  }

  await requireProofForApi(services, tenant.id, audience, confirmation);
  const orgId = await grantedOrganization(services, tenant.id, grant, optionalString(params, 'organization') || undefined);

  let scopes = grant.scope;
  if (typeof params.scope === 'string' && params.scope.trim() !== '') {
    const requested = [...new Set(params.scope.trim().split(/\s+/))];
    const missing = requested.filter((s) => !grant.scope.includes(s));
    if (missing.length > 0) throw new InvalidScope(`Scopes not granted to this client: ${missing.join(' ')}`);
    scopes = requested;
  }

  const { token, expiresIn } = await signAccessToken(
    services.keyRing,
    tenant.id,
    {
      iss: tenant.issuer,
      sub: `${client.client_id}@clients`,
      aud: audience,
      scope: scopes.join(' '),
      azp: client.client_id,
      gty: 'client-credentials',
      ...(orgId && { org_id: orgId }),
      ...bound.claims,
    },
    api.token_lifetime,
  );
  return { access_token: token, token_type: bound.tokenType, expires_in: expiresIn, scope: scopes.join(' ') };
};

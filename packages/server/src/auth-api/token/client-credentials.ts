/**
 * grant_type=client_credentials (RFC 6749 §4.4): a confidential client gets an access token for an API
 * (`audience`) it holds a client grant for. `scope` may narrow the granted scopes; asking for one that was not
 * granted is an error, never silently dropped.
 */
import { signAccessToken } from '../../crypto/jwt.js';
import { InvalidRequest } from '../../http/errors.js';
import { authenticateClient } from '../client-auth/index.js';
import { binding, certificateBinding, requireProofForApi, requireProofIfAsked } from '../sender-constraint.js';
import { AccessDenied, InvalidScope, UnauthorizedClient } from '../errors.js';
import type { GrantHandler } from './types.js';

export const clientCredentials: GrantHandler = async ({ request, params, services, endpointUrl, proof }) => {
  const tenant = request.tenant;
  const client = await authenticateClient(request, params, services, { allowPublic: false, endpointUrl });
  if (!client.grant_types.includes('client_credentials')) {
    throw new UnauthorizedClient("Grant type 'client_credentials' not allowed for the client.");
  }
  const certificate = certificateBinding(request, client);
  requireProofIfAsked(client, proof, certificate);
  const confirmation = { ...(proof && { jkt: proof.jkt }), ...(certificate !== undefined && { 'x5t#S256': certificate }) };
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
      ...bound.claims,
    },
    api.token_lifetime,
  );
  return { access_token: token, token_type: bound.tokenType, expires_in: expiresIn, scope: scopes.join(' ') };
};

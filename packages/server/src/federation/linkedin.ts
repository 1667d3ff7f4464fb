/**
 * `linkedin`: Sign In with LinkedIn using OpenID Connect, an OpenID Connect preset. Endpoints from LinkedIn's
 * discovery document (https://www.linkedin.com/oauth/.well-known/openid-configuration), written in so that no
 * login waits for it; scopes `openid profile email` (LinkedIn's three); the secret in the token request's body,
 * the one method LinkedIn's token endpoint supports. Users are `linkedin|<sub>`.
 */
import { oidcPreset } from './oidc-preset.js';

export const linkedinStrategy = oidcPreset({
  name: 'linkedin',
  provider: 'LinkedIn',
  issuer: 'https://www.linkedin.com/oauth',
  authorization_endpoint: 'https://www.linkedin.com/oauth/v2/authorization',
  token_endpoint: 'https://www.linkedin.com/oauth/v2/accessToken',
  userinfo_endpoint: 'https://api.linkedin.com/v2/userinfo',
  jwks_uri: 'https://www.linkedin.com/oauth/openid/jwks',
  scope: 'openid profile email',
  token_endpoint_auth_method: 'client_secret_post',
});

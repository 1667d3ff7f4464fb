/**
 * `windowslive`: Sign in with a personal Microsoft account (Outlook.com, Xbox, Skype…) through the Microsoft
 * identity platform v2.0, an OpenID Connect preset. The `consumers` authority's endpoints, written in: its
 * issuer is the personal-accounts tenant (9188040d-6c67-4c5b-b112-36a304b66dad), one fixed value, where the
 * `common` authority's is a per-tenant template an ID token could not be checked against. The secret in the
 * token request's body, as Microsoft's authorization code flow documents it. Users are `windowslive|<sub>`
 * (`sub` is pairwise: per application). Work or school accounts: override the endpoints with a tenant's.
 */
import { oidcPreset } from './oidc-preset.js';

const CONSUMERS = 'https://login.microsoftonline.com/consumers';

export const windowsliveStrategy = oidcPreset({
  name: 'windowslive',
  provider: 'Microsoft',
  issuer: 'https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0',
  authorization_endpoint: `${CONSUMERS}/oauth2/v2.0/authorize`,
  token_endpoint: `${CONSUMERS}/oauth2/v2.0/token`,
  userinfo_endpoint: 'https://graph.microsoft.com/oidc/userinfo',
  jwks_uri: `${CONSUMERS}/discovery/v2.0/keys`,
  scope: 'openid email profile',
  token_endpoint_auth_method: 'client_secret_post',
});

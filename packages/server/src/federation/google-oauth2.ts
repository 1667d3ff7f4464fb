/**
 * `google-oauth2`: Sign in with Google, an OpenID Connect preset. Endpoints from Google's discovery document
 * (https://accounts.google.com/.well-known/openid-configuration), written in so that no login waits for it;
 * the secret in the token request's body, as Google's OAuth 2.0 documentation sends it. Users are
 * `google-oauth2|<sub>`.
 */
import { oidcPreset } from './oidc-preset.js';

export const googleStrategy = oidcPreset({
  name: 'google-oauth2',
  provider: 'Google',
  issuer: 'https://accounts.google.com',
  authorization_endpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
  token_endpoint: 'https://oauth2.googleapis.com/token',
  userinfo_endpoint: 'https://openidconnect.googleapis.com/v1/userinfo',
  jwks_uri: 'https://www.googleapis.com/oauth2/v3/certs',
  scope: 'openid email profile',
  token_endpoint_auth_method: 'client_secret_post',
});

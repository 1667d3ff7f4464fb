/**
 * `github`: Sign in with GitHub, an OAuth 2.0 preset (GitHub has no OpenID Connect for users). The profile is
 * GitHub's `GET /user`: `id` is the user id (`github|<id>`), `login` the nickname, `avatar_url` the picture;
 * `email` is the public email only (a private one needs `/user/emails`, not read yet). GitHub's API wants a
 * User-Agent. Enterprise Server: override `authorizationURL`, `tokenURL`, `userinfoURL`.
 */
import { oauth2Preset } from './oauth2-preset.js';

export const githubStrategy = oauth2Preset({
  name: 'github',
  provider: 'GitHub',
  authorizationURL: 'https://github.com/login/oauth/authorize',
  tokenURL: 'https://github.com/login/oauth/access_token',
  userinfoURL: 'https://api.github.com/user',
  scope: ['read:user', 'user:email'],
  profile_mapping: { user_id: 'id', nickname: 'login', name: 'name', picture: 'avatar_url', email: 'email' },
  customHeaders: { 'User-Agent': 'Gatehouse', 'X-GitHub-Api-Version': '2022-11-28' },
});

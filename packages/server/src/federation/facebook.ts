/**
 * `facebook`: Facebook Login, an OAuth 2.0 preset (its manually built login flow: the Login dialog, then the
 * Graph API's `oauth/access_token`), pinned to one Graph API version. The profile is the Graph API's `GET /me`
 * with the fields asked for explicitly (Graph returns only `id` and `name` otherwise): `id` is the app-scoped
 * user id (`facebook|<id>`), `picture.data.url` the picture. No email when the person has
 * none or declines `email`. Another Graph version: override the three URLs.
 */
import { oauth2Preset } from './oauth2-preset.js';

const GRAPH_VERSION = 'v19.0';

export const facebookStrategy = oauth2Preset({
  name: 'facebook',
  provider: 'Facebook',
  authorizationURL: `https://www.facebook.com/${GRAPH_VERSION}/dialog/oauth`,
  tokenURL: `https://graph.facebook.com/${GRAPH_VERSION}/oauth/access_token`,
  userinfoURL: `https://graph.facebook.com/${GRAPH_VERSION}/me?fields=id,name,first_name,last_name,email,picture`,
  scope: ['email', 'public_profile'],
  profile_mapping: { user_id: 'id', name: 'name', given_name: 'first_name', family_name: 'last_name', email: 'email', picture: 'picture.data.url' },
});

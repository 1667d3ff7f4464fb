/* global document, window */
/**
 * A minimal React app on @auth0/auth0-react v2, as its README shows it: Auth0Provider around the app, useAuth0
 * for login, the user, an access token for an API, and logout. Bundled by the test with esbuild; the settings
 * come from window.APP_CONFIG, which the page sets.
 */
import { Auth0Provider, useAuth0 } from '@auth0/auth0-react';
import { createElement as h, useState } from 'react';
import { createRoot } from 'react-dom/client';

const config = window.APP_CONFIG;

function Profile() {
  const { isLoading, isAuthenticated, error, user, loginWithRedirect, logout, getAccessTokenSilently } = useAuth0();
  const [token, setToken] = useState('');
  if (isLoading) return h('p', { id: 'state' }, 'loading');
  if (error) return h('p', { id: 'state' }, `error: ${error.message}`);
  if (!isAuthenticated) return h('div', null, h('p', { id: 'state' }, 'signed out'), h('button', { onClick: () => loginWithRedirect() }, 'Log in'));
  return h(
    'div',
    null,
    h('p', { id: 'state' }, 'signed in'),
    h('pre', { id: 'user' }, JSON.stringify(user)),
    h('button', { onClick: async () => setToken(await getAccessTokenSilently({ cacheMode: 'off' })) }, 'Get token'),
    h('pre', { id: 'token' }, token),
    h('button', { onClick: () => logout({ logoutParams: { returnTo: config.origin } }) }, 'Log out'),
  );
}

createRoot(document.getElementById('root')).render(
  h(
    Auth0Provider,
    {
      domain: config.domain,
      clientId: config.clientId,
      authorizationParams: { redirect_uri: config.origin, audience: config.audience, scope: 'openid profile email read:orders' },
    },
    h(Profile),
  ),
);

/**
 * Signing in: the console is an SPA client of its own tenant, so it uses auth0-spa-js (code + PKCE through the
 * tenant's /authorize and hosted login). Tokens stay in memory only (cacheLocation "memory"): nothing secret in
 * localStorage; a reload signs in again silently through the tenant's session.
 */
import { createAuth0Client, type Auth0Client } from '@auth0/auth0-spa-js';
import type { ConsoleConfig } from './config.js';

export interface SignedIn {
  client: Auth0Client;
  /** The admin's name or email, for the header. */
  who: string;
  /** The Management API permissions the access token carries (RBAC on the Management API). */
  permissions: string[];
}

const consoleHome = () => `${window.location.origin}/console/`;

/** The claims of our own access token (a JWT this tenant signed); only read, never trusted for anything but display. */
function claimsOf(token: string): Record<string, unknown> {
  const payload = token.split('.')[1] ?? '';
  try {
    return JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** Resolves when signed in; otherwise sends the browser to the hosted login and never resolves. */
export async function signIn(config: ConsoleConfig): Promise<SignedIn> {
  const client = await createAuth0Client({
    domain: config.domain,
    clientId: config.clientId,
    // No `issuer`: the library would prefix it with https://; from `domain` (a full URL, http on localhost
    // too) it expects `<domain>/`, which is this tenant's issuer.
    cacheLocation: 'memory',
    useRefreshTokens: false,
    authorizationParams: { redirect_uri: consoleHome(), audience: config.audience, scope: 'openid profile email' },
  });
  const query = new URLSearchParams(window.location.search);
  if (query.has('code') && query.has('state')) {
    const { appState } = await client.handleRedirectCallback<{ hash?: string }>();
    // Back to the page the admin asked for, without the code in the address bar.
    window.history.replaceState(null, '', `${consoleHome()}${appState?.hash ?? ''}`);
  } else if (query.has('error')) {
    throw new Error(query.get('error_description') ?? query.get('error') ?? 'Sign-in failed');
  } else {
    await client.checkSession();
  }
  if (!(await client.isAuthenticated())) {
    await client.loginWithRedirect({ appState: { hash: window.location.hash } });
    return new Promise<never>(() => undefined);
  }
  const token = (await client.getTokenSilently()) ?? '';
  const user = await client.getUser();
  const permissions = claimsOf(token).permissions;
  return {
    client,
    who: user?.email ?? user?.name ?? 'admin',
    permissions: Array.isArray(permissions) ? permissions.filter((p): p is string => typeof p === 'string') : [],
  };
}

export async function signOut(client: Auth0Client): Promise<void> {
  await client.logout({ logoutParams: { returnTo: consoleHome() } });
}

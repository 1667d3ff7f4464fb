/**
 * POST /delegation, the reference's deprecated legacy endpoint, offered for the one add-on a team leaving
 * Firebase needs: `api_type: firebase` exchanges a user's ID token (or refresh token) issued to `client_id`
 * for a Firebase custom token signed with the service account of `target`'s `addons.firebase`
 * (firebase/addon.ts, firebase/custom-token.ts). Answer: `{ id_token, token_type, expires_in }`.
 *
 * Who may call, as the reference decides it: a client that is not OIDC conformant (the reference disables
 * delegation for those) and holds the legacy grant type for the token it sends
 * (`http://auth0.com/oauth/legacy/grant-type/delegation/id_token` or `…/delegation/refresh_token`, the
 * reference's names; there is no `jwt-bearer` client grant type), and that the target's `allowed_clients` lists
 * when the list is not empty (as in the reference). The ID token form takes `client_id` alone, as
 * the reference does (the token is already the proof, and browsers call it); the refresh token form
 * authenticates a confidential client as /oauth/token does, so a copied refresh token is not enough.
 *
 * Not offered, 501: `api_type` `app` (or none), an ID token re-signed for another client, which no relying party
 * of today expects; and the other add-ons (Azure, AWS, SAP, Salesforce…), which this server does not have.
 *
 * Logged: `sd` on success (client, user, scope, details target and api_type), `fd` on each refusal with the
 * error; never a token.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { errors as joseErrors } from 'jose';
import { verifyIssuedIdToken } from '../crypto/access-token.js';
import { InvalidRequest, NotOffered, ProtocolError } from '../http/errors.js';
import { FORM } from '../http/openapi.js';
import { errorResponses } from '../http/responses.js';
import type { App, Services } from '../services.js';
import type { Client } from '../store/clients.js';
import { findRefreshTokenByHash } from '../store/refresh-tokens.js';
import { findPrimaryUser, type User } from '../store/users.js';
import { authenticateClient } from './client-auth/index.js';
import { CLIENT_AUTHENTICATION_ERRORS, InvalidClient, InvalidScope, UnauthorizedClient, UnsupportedGrantType } from './errors.js';
import { firebaseServiceAccount } from './firebase/addon.js';
import { MAX_UID_LENGTH, signFirebaseCustomToken } from './firebase/custom-token.js';
import { userClaims } from './user-tokens/claims.js';
import { InvalidGrant } from './user-tokens/errors.js';
import { hashToken, refreshPolicy } from './user-tokens/refresh-tokens.js';

export const DELEGATION_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const LEGACY_DELEGATION_GRANTS = {
  id_token: 'http://auth0.com/oauth/legacy/grant-type/delegation/id_token',
  refresh_token: 'http://auth0.com/oauth/legacy/grant-type/delegation/refresh_token',
} as const;

/** `scope` words beyond `openid`: the OIDC sets, or single claims as legacy clients asked for them (`openid email`). */
const PROFILE_SET = ['name', 'nickname', 'given_name', 'family_name', 'picture', 'updated_at'];
const EMAIL_SET = ['email', 'email_verified'];
const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  ...Object.fromEntries([...PROFILE_SET, ...EMAIL_SET].map((claim) => [claim, [claim]])),
  // After the single claims: `email` is both a claim and the OIDC scope, and the scope (with email_verified) wins.
  profile: PROFILE_SET,
  email: EMAIL_SET,
};

const DelegationRequest = Type.Object(
  {
    client_id: Type.Optional(Type.String({ maxLength: 200 })),
    client_secret: Type.Optional(Type.String({ maxLength: 1000, description: 'With refresh_token, for a confidential client (as at /oauth/token)' })),
    grant_type: Type.Optional(Type.String({ maxLength: 200, description: DELEGATION_GRANT })),
    id_token: Type.Optional(Type.String({ maxLength: 16_000, description: 'An ID token this tenant issued to client_id, unexpired' })),
    refresh_token: Type.Optional(Type.String({ maxLength: 16_000, description: 'Or one of client_id\u2019s refresh tokens' })),
    target: Type.Optional(Type.String({ maxLength: 200, description: 'The client whose add-on the token is for (default: client_id)' })),
    scope: Type.Optional(Type.String({ maxLength: 2000, description: '`openid`, plus `profile`, `email` or single profile claims (default: openid)' })),
    api_type: Type.Optional(Type.String({ maxLength: 100, description: '`firebase`; anything else is not offered' })),
  },
  // OAuth: unknown parameters are ignored (RFC 6749 §3.2).
  { additionalProperties: true },
);
type Body = Static<typeof DelegationRequest>;

const DelegationResponse = Type.Object({
  id_token: Type.String({ description: 'A Firebase custom token, for signInWithCustomToken()' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds (the add-on\u2019s lifetime_in_seconds, at most 3600)' }),
});

interface Delegated {
  client: Client;
  user: User;
  target: Client;
  apiType: string;
  scope: string;
}

/** The words of `scope`, checked: `openid` is required, the rest name claims. */
function requestedClaims(scope: string): Set<string> {
  const words = scope.split(/\s+/).filter(Boolean);
  if (!words.includes('openid')) throw new InvalidScope('scope must include openid');
  const unknown = words.filter((w) => w !== 'openid' && !Object.hasOwn(SCOPE_CLAIMS, w));
  if (unknown.length > 0) {
    throw new InvalidScope(`scope: ${unknown.slice(0, 5).join(', ').slice(0, 200)} not supported here; use openid with profile, email or the claims ${[...PROFILE_SET, ...EMAIL_SET].join(', ')}`);
  }
  return new Set(words.flatMap((w) => SCOPE_CLAIMS[w] ?? []));
}

function claimsFor(user: User, wanted: ReadonlySet<string>): Record<string, unknown> {
  const all = userClaims(user, ['profile', 'email']) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(all).filter(([name]) => wanted.has(name)));
}

/** The ID token form: this tenant's token for `client`, still valid, of a user who may still sign in. */
async function userOfIdToken(services: Services, request: FastifyRequest, client: Client, idToken: string, noteUser: (user: User) => void): Promise<User> {
  let sub: string;
  try {
    ({ sub } = await verifyIssuedIdToken(services.keyRing, request.tenant, idToken, client.client_id));
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw new InvalidGrant('The id_token has expired; sign in again or send a refresh_token');
    if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'aud') throw new InvalidGrant('The id_token was not issued to client_id');
    throw new InvalidGrant('The id_token is not a valid ID token of this tenant');
  }
  const user = await findPrimaryUser(services.store.db, request.tenant.id, sub);
  // Named before the blocked check: the log of a refusal says whose token it was.
  if (user) noteUser(user);
  if (!user || user.blocked) throw new InvalidGrant('The id_token\u2019s user is unknown or blocked');
  return user;
}

/**
 * The refresh token form: one of `client`'s, live, current (a rotated token has been replaced) and unexpired.
 * Reading it does not spend it: no rotation, no idle-expiry move, as the reference's delegation only reads it.
 */
async function userOfRefreshToken(services: Services, request: FastifyRequest, client: Client, refreshToken: string, noteUser: (user: User) => void): Promise<User> {
  const invalid = () => new InvalidGrant('Unknown or invalid refresh token.');
  const now = Date.now();
  const token = await findRefreshTokenByHash(services.store.db, request.tenant.id, hashToken(refreshToken));
  if (!token || token.client_id !== client.client_id || token.revoked_at !== null || token.rotated_at !== null) throw invalid();
  if ((token.expires_at !== null && token.expires_at <= now) || (token.idle_expires_at !== null && token.idle_expires_at <= now)) throw invalid();
  if (token.rotating !== refreshPolicy(client).rotating) throw invalid();
  const user = await findPrimaryUser(services.store.db, request.tenant.id, token.user_id);
  if (user) noteUser(user);
  if (!user || user.blocked) throw invalid();
  return user;
}

async function delegate(
  services: Services,
  request: FastifyRequest,
  body: Body,
  noteClient: (client: Client) => void,
  noteUser: (user: User) => void,
): Promise<{ tokens: Static<typeof DelegationResponse>; delegated: Delegated }> {
  const tenant = request.tenant;
  if (!body.client_id) throw new InvalidRequest('client_id is required');
  if (body.grant_type !== DELEGATION_GRANT) {
    throw body.grant_type ? new UnsupportedGrantType(body.grant_type.slice(0, 200)) : new InvalidRequest(`grant_type is required (${DELEGATION_GRANT})`);
  }
  const form = body.id_token ? 'id_token' : body.refresh_token ? 'refresh_token' : undefined;
  if (!form || (body.id_token && body.refresh_token)) throw new InvalidRequest('Send exactly one of id_token and refresh_token');

  const client =
    form === 'refresh_token'
      ? await authenticateClient(request, body, services, { allowPublic: true, endpointUrl: `${tenant.baseUrl}/delegation` })
      : await services.configCache.client(tenant.id, body.client_id);
  if (!client) throw new InvalidClient();
  noteClient(client);
  if (client.oidc_conformant === true) {
    throw new UnauthorizedClient('Delegation is not allowed for OIDC-conformant applications (oidc_conformant is true)');
  }
  const grant = LEGACY_DELEGATION_GRANTS[form];
  if (!client.grant_types.includes(grant)) throw new UnauthorizedClient(`Grant type '${grant}' not allowed for the client.`);

  // What is asked for is checked before the token, so a refusal says the first thing wrong with the request.
  const apiType = body.api_type ?? 'app';
  if (apiType !== 'firebase') {
    throw apiType === 'app'
      ? new NotOffered('Delegation with api_type app', '(an ID token re-signed for another application) is not offered: use api_type firebase with a target that has the Firebase add-on')
      : new NotOffered(`Delegation with api_type ${JSON.stringify(apiType.slice(0, 100))}`, 'is not offered: firebase is the one add-on this server has');
  }
  const wanted = requestedClaims(body.scope ?? 'openid');
  const targetId = body.target ?? client.client_id;
  const target = targetId === client.client_id ? client : await services.configCache.client(tenant.id, targetId);
  if (!target) throw new InvalidRequest('target is not an application of this tenant');
  // The reference's `allowed_clients` of the target: who may ask for its tokens; empty means every client.
  const allowed = target.allowed_clients ?? [];
  if (target !== client && allowed.length > 0 && !allowed.includes(client.client_id)) {
    throw new UnauthorizedClient('The client is not in the allowed_clients of target');
  }
  const account = firebaseServiceAccount(services.sealer, target);
  if (!account) throw new InvalidRequest('target has no Firebase add-on (addons.firebase with a service account)');

  const user =
    form === 'id_token'
      ? await userOfIdToken(services, request, client, body.id_token!, noteUser)
      : await userOfRefreshToken(services, request, client, body.refresh_token!, noteUser);
  if (user.user_id.length > MAX_UID_LENGTH) throw new InvalidRequest(`The user id is longer than the ${MAX_UID_LENGTH} characters Firebase takes as a uid`);
  const custom = await signFirebaseCustomToken(account, user.user_id, claimsFor(user, wanted));
  return {
    tokens: { id_token: custom.token, token_type: 'Bearer', expires_in: custom.expiresIn },
    delegated: { client, user, target, apiType, scope: body.scope ?? 'openid' },
  };
}

export function registerDelegation(app: App, services: Services): void {
  app.post('/delegation', {
    schema: {
      tags: ['authentication'],
      summary: 'Delegation (legacy): a Firebase custom token for a signed-in user',
      description:
        'The reference\u2019s deprecated endpoint, for the Firebase add-on: exchanges an ID token (or refresh token) of client_id for a Firebase custom token signed with target\u2019s service account (addons.firebase). The client must not be OIDC conformant and must hold the legacy grant type http://auth0.com/oauth/legacy/grant-type/delegation/id_token (or \u2026/refresh_token). api_type app and the other add-ons answer 501. Logged as `sd` / `fd`.',
      body: DelegationRequest,
      consumes: ['application/json', FORM],
      response: {
        200: DelegationResponse,
        ...errorResponses('oauth', {
          400: 'invalid_request (a missing parameter, an unknown target, a target without the Firebase add-on), unsupported_grant_type, invalid_grant (an id_token that is invalid, expired, another client\u2019s or of a blocked user; an unknown, expired, rotated or revoked refresh token), invalid_scope',
          401: CLIENT_AUTHENTICATION_ERRORS[401],
          403: 'unauthorized_client: the client is OIDC conformant, lacks the legacy delegation grant type for the token it sent, or is not in the target\u2019s allowed_clients',
          501: 'not_offered: api_type app (an id_token re-signed for another client) and add-ons other than firebase',
        }),
      },
    },
    config: {
      rateLimit: { bucket: 'token' },
      cors: { kind: 'origins', credentials: false, isAllowed: (request, origin) => services.clientOrigins.allows(request.tenant.id, origin) },
    },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      let client: Client | undefined;
      let user: User | undefined;
      try {
        const { tokens, delegated } = await delegate(
          services,
          request,
          request.body,
          (c) => (client = c),
          (u) => (user = u),
        );
        services.tenantLogs.recordFor(request, {
          type: 'sd',
          client: { client_id: delegated.client.client_id, name: delegated.client.name },
          user_id: delegated.user.user_id,
          user_name: delegated.user.email ?? delegated.user.username ?? undefined,
          scope: delegated.scope,
          details: { target: delegated.target.client_id, api_type: delegated.apiType },
        });
        return tokens;
      } catch (error) {
        const known = error instanceof ProtocolError;
        // A request refused before its client was looked at still names the client it claimed, when it is one of ours.
        const named = request.body.client_id;
        const c = (client as Client | undefined) ?? (named ? await services.configCache.client(request.tenant.id, named) : undefined);
        const u = user as User | undefined;
        services.tenantLogs.recordFor(request, {
          type: 'fd',
          description: known ? error.message.slice(0, 500) : 'Internal error',
          ...(c && { client: { client_id: c.client_id, name: c.name } }),
          ...(u && { user_id: u.user_id, user_name: u.email ?? u.username ?? undefined }),
          details: {
            error: known ? error.code : 'server_error',
            ...(c && request.body.target && { target: request.body.target.slice(0, 200) }),
            ...(c && request.body.api_type && { api_type: request.body.api_type.slice(0, 100) }),
          },
        });
        throw error;
      }
    },
  });
}

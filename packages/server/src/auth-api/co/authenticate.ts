/**
 * POST /co/authenticate: embedded login's credentialed cross-origin XHR (auth0-js `login`, reference C.8).
 * Checks, in the contract's order: the body, the client (cross-origin authentication on), the page's origin
 * (among the client's allowed origins or web origins, else the generic 403 text), the credential type, the
 * realm, the credentials. Success is `{login_ticket, co_verifier, co_id}` plus the cookie binding the ticket to
 * this browser; the page then navigates to /authorize?login_ticket=….
 */
import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { either, errorResponses, textBody } from '../../http/responses.js';
import type { App, Services } from '../../services.js';
import { authenticateCredentials } from './credentials.js';
import { CrossOriginLoginNotAllowed } from './errors.js';
import { clientAllowsOrigin } from './origin.js';
import { issueLoginTicket } from './tickets.js';

export const CO_AUTHENTICATE_PATH = '/co/authenticate';

const Body = Type.Object(
  {
    client_id: Type.String({ minLength: 1, maxLength: 100 }),
    username: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    otp: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    realm: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    credential_type: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false },
);

const Ticket = Type.Object({ login_ticket: Type.String(), co_verifier: Type.String(), co_id: Type.String() });

/**
 * The contract's generic 403 for a page origin the client does not allow: a text body, and no CORS headers,
 * which the tenant-wide preflight policy may have set before the client was known.
 */
function refuseOrigin(reply: FastifyReply, origin: string | undefined): FastifyReply {
  reply.removeHeader('access-control-allow-origin');
  reply.removeHeader('access-control-allow-credentials');
  return reply
    .code(403)
    .type('text/plain; charset=utf-8')
    .send(`Origin ${origin ? origin.slice(0, 200) : '(none)'} is not allowed.`);
}

export function registerCoAuthenticate(app: App, services: Services): void {
  app.post(
    CO_AUTHENTICATE_PATH,
    {
      schema: {
        summary: 'Cross-origin authentication for embedded login',
        tags: ['authentication'],
        body: Body,
        response: {
          200: Ticket,
          ...errorResponses('oauth', {
            400: 'invalid_request (a bad body, an unknown realm), unsupported_credential_type',
            401: 'unauthorized_client (cross-origin login not allowed for the client), password_leaked',
            429: 'too_many_attempts: the account is locked from this IP, or the IP is throttled',
          }),
          403: either(
            errorResponses('oauth', { 403: 'access_denied (wrong email or password), blocked_user' })[403]!,
            textBody("The page's origin is not allowed for the client (the contract's generic 403, without CORS headers)"),
          ),
        },
      },
      config: {
        // Before the body names the client, any origin a client of the tenant allows passes the preflight;
        // the handler then holds the origin against that client's own lists.
        cors: { kind: 'origins', credentials: true, isAllowed: (request, origin) => services.clientOrigins.allows(request.tenant.id, origin) },
        rateLimit: { bucket: 'login' },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const body = request.body;
      const client = await services.configCache.client(request.tenant.id, body.client_id);
      if (!client) throw new CrossOriginLoginNotAllowed('Unknown client or cross origin login not allowed.');
      if (client.cross_origin_authentication !== true) throw new CrossOriginLoginNotAllowed();
      const origin = request.headers.origin;
      if (!origin || !clientAllowsOrigin(client, origin)) return refuseOrigin(reply, origin);
      const user = await authenticateCredentials(services, request, client, body);
      return reply.send(await issueLoginTicket(request, reply, services, client, user));
    },
  );
}

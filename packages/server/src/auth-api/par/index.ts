/**
 * POST /oauth/par (RFC 9126): a client pushes its authorization request over the back channel and gets a
 * `request_uri` to send the browser to /authorize with. The client authenticates as at the token endpoint;
 * the parameters go through the /authorize check table's /oauth/par column (checks/index.ts), so what is
 * accepted here is exactly what /authorize accepts. Every failure is a JSON OAuth error: nothing is redirected.
 */
import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequest, ProtocolError } from '../../http/errors.js';
import { FORM } from '../../http/openapi.js';
import { errorResponses } from '../../http/responses.js';
import type { App, Services } from '../../services.js';
import { checkAuthorizationRequest } from '../authorize/checks/index.js';
import { AUTHORIZE_PARAMETERS } from '../authorize/index.js';
import { readParameters, type RawParameters } from '../authorize/request.js';
import { authenticateClient } from '../client-auth/index.js';
import { InvalidDpopProof, proofAtEndpoint } from '../dpop.js';
import { CLIENT_AUTHENTICATION_ERRORS } from '../errors.js';
import { pushRequest } from './requests.js';

export const PAR_PATH = '/oauth/par';

/** Client authentication never travels with the stored request. */
const CLIENT_CREDENTIALS = ['client_secret', 'client_assertion', 'client_assertion_type'];
const JKT = /^[A-Za-z0-9_-]{43}$/;

const ParRequest = Type.Object(
  {
    client_id: Type.Optional(Type.String({ maxLength: 200 })),
    client_secret: Type.Optional(Type.String({ maxLength: 1000 })),
    client_assertion: Type.Optional(Type.String({ maxLength: 16_000 })),
    client_assertion_type: Type.Optional(Type.String({ maxLength: 200 })),
    dpop_jkt: Type.Optional(Type.String({ maxLength: 100, description: 'RFC 9449 §10: bind the authorization code to this DPoP key (or send a DPoP proof)' })),
    ...Object.fromEntries(
      Object.entries(AUTHORIZE_PARAMETERS)
        .filter(([name]) => name !== 'client_id')
        .map(([name, description]) => [name, Type.Optional(Type.String({ maxLength: 4000, description }))]),
    ),
  },
  // As at /authorize, unknown parameters are ignored.
  { additionalProperties: true },
);

const ParResponse = Type.Object({
  request_uri: Type.String({ description: 'urn:ietf:params:oauth:request_uri:…, for /authorize with client_id' }),
  expires_in: Type.Integer({ description: 'Seconds (60 at most); the request_uri works once' }),
});

/**
 * RFC 9449 §10: the DPoP key the code will be bound to, from a proof sent with the push or from `dpop_jkt`
 * (both: they must agree). Taken out of the parameters, which /authorize does not read it from.
 */
async function pushedDpopKey(services: Services, request: FastifyRequest, reply: FastifyReply, raw: RawParameters): Promise<string | null> {
  const proof = await proofAtEndpoint(services, request, reply, PAR_PATH);
  const named = raw.dpop_jkt;
  delete raw.dpop_jkt;
  if (named !== undefined && !JKT.test(named)) throw new InvalidRequest('dpop_jkt must be a base64url SHA-256 JWK thumbprint');
  if (proof && named !== undefined && proof.jkt !== named) throw new InvalidDpopProof('dpop_jkt does not match the key of the DPoP proof');
  return proof?.jkt ?? named ?? null;
}

export function registerPushedAuthorizationRequests(app: App, services: Services): void {
  app.post(PAR_PATH, {
    schema: {
      tags: ['authentication'],
      summary: 'Push an authorization request (PAR)',
      description: 'Every /authorize parameter, with client authentication as at /oauth/token. Body as application/x-www-form-urlencoded (RFC 9126 §2.1).',
      body: ParRequest,
      consumes: [FORM],
      response: {
        201: ParResponse,
        ...errorResponses('oauth', {
          400: 'invalid_request (a missing, repeated or wrong parameter, a request_uri, a client_id of another client), invalid_request_object, unsupported_response_type, unauthorized_client (the response type is not allowed for the client), invalid_scope, invalid_dpop_proof, use_dpop_nonce',
          401: CLIENT_AUTHENTICATION_ERRORS[401],
        }),
      },
    },
    config: {
      rateLimit: { bucket: 'token' },
    },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const tenant = request.tenant;
      const body = (request.body ?? {}) as Record<string, unknown>;
      const client = await authenticateClient(request, body, services, { allowPublic: true, endpointUrl: `${tenant.baseUrl}${PAR_PATH}` });
      const raw = readParameters(body);
      for (const name of CLIENT_CREDENTIALS) delete raw[name];
      const dpopJkt = await pushedDpopKey(services, request, reply, raw);
      const checked = await checkAuthorizationRequest(services, tenant, raw, { endpoint: 'par', client });
      // RFC 9126 §2.3: errors as at the token endpoint (RFC 6749 §5.2), all 400 (unauthorized_client is 403 elsewhere here).
      if (!checked.ok) throw new ProtocolError(400, checked.error.code, checked.error.description);
      const pushed = await pushRequest(services, tenant, client, { ...checked.params, client_id: client.client_id }, dpopJkt);
      return reply.code(201).send(pushed);
    },
  });
}

/**
 * Request objects (RFC 9101, JAR): the authorization request as a JWT the client signed.
 *  - signed with RS256, PS256 or ES256 by one of the client's private_key_jwt credentials (the same keys it
 *    authenticates with; `signed_request_object.credentials` may narrow them); `alg: none`, unsigned and
 *    encrypted objects are refused;
 *  - `iss` is the client, `aud` the issuer, `exp` required and at most an hour after `nbf` (or `iat`, or now),
 *    `nbf` not in the future (FAPI 2.0 Message Signing §5.3.1); jose checks signature, `exp`, `nbf` and types;
 *  - its claims are the request: parameters outside it (but client_id) are ignored (RFC 9101 §6.3).
 */
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { Client } from '../../store/clients.js';
import type { Tenant } from '../../store/tenants.js';
import { importCredential } from '../client-auth/private-key-jwt.js';
import { InvalidRequestObject } from '../errors.js';
import type { RawParameters } from './request.js';

export const REQUEST_OBJECT_ALGS = ['RS256', 'PS256', 'ES256'] as const;
const CLOCK_TOLERANCE_S = 30;
const MAX_LIFETIME_S = 3600;
/** JWT claims about the object itself, not parameters of the request. */
const ENVELOPE = new Set(['iss', 'aud', 'exp', 'nbf', 'iat', 'jti', 'sub']);

function signingCredentials(client: Client, now: number) {
  const allowed = client.signed_request_object?.credentials?.map((c) => c.id);
  return (client.client_authentication_methods?.private_key_jwt?.credentials ?? []).filter(
    (c) => (c.expires_at === undefined || Date.parse(c.expires_at) > now) && (allowed === undefined || allowed.includes(c.id)),
  );
}

function describeFailure(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'The request object has expired';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `The request object's ${error.claim} claim is invalid: ${error.reason === 'check_failed' ? 'it is not in the range allowed' : error.reason}`;
  return 'The request object signature could not be verified with a key registered for the client';
}

/** The request's parameters from a verified request object; throws invalid_request_object otherwise. */
export async function readRequestObject(tenant: Tenant, client: Client, jwt: string, now = Date.now()): Promise<RawParameters> {
  const parts = jwt.split('.');
  if (parts.length === 5) throw new InvalidRequestObject('Encrypted request objects are not supported');
  let alg: string | undefined;
  try {
    alg = decodeProtectedHeader(jwt).alg;
  } catch {
    throw new InvalidRequestObject('The request object is not a JWT');
  }
  if (parts.length !== 3) throw new InvalidRequestObject('The request object is not a JWT');
  if (alg === undefined || alg === 'none' || parts[2] === '') throw new InvalidRequestObject('Unsigned request objects (alg none) are not accepted');
  if (!(REQUEST_OBJECT_ALGS as readonly string[]).includes(alg)) throw new InvalidRequestObject(`Unsupported request object alg ${alg.slice(0, 20)}; use ${REQUEST_OBJECT_ALGS.join(', ')}`);
  const credentials = signingCredentials(client, now);
  if (credentials.length === 0) throw new InvalidRequestObject('The client has no key registered for signing request objects');

  let payload: JWTPayload | undefined;
  let failure: unknown;
  for (const credential of credentials) {
    let key;
    try {
      key = await importCredential(credential, alg);
    } catch {
      continue; // a key of another type (RSA for ES256, EC for PS256)
    }
    try {
      ({ payload } = await jwtVerify(jwt, key, {
        algorithms: [alg],
        issuer: client.client_id,
        audience: tenant.issuer,
        requiredClaims: ['exp'],
        clockTolerance: CLOCK_TOLERANCE_S,
        currentDate: new Date(now),
      }));
      break;
    } catch (error) {
      failure = error;
      // A claim failed with a key whose signature held: no other key makes that right.
      if (error instanceof joseErrors.JWTClaimValidationFailed || error instanceof joseErrors.JWTExpired) break;
    }
  }
  if (!payload) throw new InvalidRequestObject(describeFailure(failure));

  const start = payload.nbf ?? payload.iat ?? Math.floor(now / 1000);
  if (payload.exp! - start > MAX_LIFETIME_S) throw new InvalidRequestObject(`The request object may live ${MAX_LIFETIME_S} seconds at most (exp - nbf)`);
  if (payload.client_id !== undefined && payload.client_id !== client.client_id) throw new InvalidRequestObject('The request object client_id claim is not the client');
  if (payload.request !== undefined || payload.request_uri !== undefined) throw new InvalidRequestObject('A request object must not contain request or request_uri');

  const params: RawParameters = {};
  for (const [name, value] of Object.entries(payload)) {
    if (ENVELOPE.has(name)) continue;
    if (typeof value === 'string') params[name] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') params[name] = String(value);
  }
  params.client_id = client.client_id;
  return params;
}

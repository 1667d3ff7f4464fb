/**
 * A Firebase custom token (what `signInWithCustomToken()` takes), made as firebase-admin's createCustomToken
 * makes it (src/auth/token-generator.ts): RS256 with the service account's key, `iss` = `sub` = its
 * client_email, `aud` = the Identity Toolkit, `uid`, `iat`/`exp`, and the developer `claims` only when there
 * are some. One addition, the reference's: `kid` = private_key_id when the add-on names it, so Google picks the
 * key without trying each of the account's.
 */
import { SignJWT } from 'jose';
import type { FirebaseServiceAccount } from './addon.js';

export const FIREBASE_AUDIENCE = 'https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit';
/** Firebase's limit on a uid. */
export const MAX_UID_LENGTH = 128;
/** Claim names Firebase reserves (firebase-admin refuses them as developer claims). */
const RESERVED_CLAIMS = new Set(['acr', 'amr', 'at_hash', 'aud', 'auth_time', 'azp', 'cnf', 'c_hash', 'exp', 'iat', 'iss', 'jti', 'nbf', 'nonce', 'firebase', 'sub']);

export interface CustomToken {
  token: string;
  /** Seconds. */
  expiresIn: number;
}

export async function signFirebaseCustomToken(account: FirebaseServiceAccount, uid: string, claims: Record<string, unknown>, now = Date.now()): Promise<CustomToken> {
  if (uid.length === 0 || uid.length > MAX_UID_LENGTH) throw new RangeError(`a Firebase uid has 1 to ${MAX_UID_LENGTH} characters`);
  const reserved = Object.keys(claims).filter((name) => RESERVED_CLAIMS.has(name));
  if (reserved.length > 0) throw new RangeError(`Firebase reserves the claims ${reserved.join(', ')}`);
  const iat = Math.floor(now / 1000);
  const token = await new SignJWT({ uid, ...(Object.keys(claims).length > 0 && { claims }) })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(account.privateKeyId !== undefined && { kid: account.privateKeyId }) })
    .setIssuer(account.clientEmail)
    .setSubject(account.clientEmail)
    .setAudience(FIREBASE_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + account.lifetimeSeconds)
    .sign(account.privateKey);
  return { token, expiresIn: account.lifetimeSeconds };
}

/**
 * The logout token (OpenID Connect Back-Channel Logout 1.0 §2.4): a JWT signed with the tenant's ID token key,
 * header `typ: logout+jwt` (§2.4, and FAPI's 10.5.5 check), claims `iss`, `aud` (the client), `iat`, `exp`,
 * `jti`, `sub`, `sid`, and `events` with the back-channel logout event as an empty object. Never a `nonce`
 * (§2.4: that is how an RP tells it from an ID token). Short-lived: the RP checks it on receipt.
 */
import { SignJWT } from 'jose';
import type { KeyRing } from '../../crypto/key-ring.js';

export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
export const LOGOUT_TOKEN_TYPE = 'logout+jwt';
/** Two minutes: enough for a delivery attempt and clock skew; each retry signs a fresh one. */
export const LOGOUT_TOKEN_LIFETIME_S = 120;

export interface LogoutTokenFacts {
  tenantId: string;
  issuer: string;
  clientId: string;
  userId: string;
  sessionId: string;
  jti: string;
}

export async function signLogoutToken(keyRing: KeyRing, facts: LogoutTokenFacts, now = Date.now()): Promise<string> {
  const key = await keyRing.signingKey(facts.tenantId);
  const iat = Math.floor(now / 1000);
  return new SignJWT({ sid: facts.sessionId, events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: LOGOUT_TOKEN_TYPE })
    .setIssuer(facts.issuer)
    .setAudience(facts.clientId)
    .setSubject(facts.userId)
    .setJti(facts.jti)
    .setIssuedAt(iat)
    .setExpirationTime(iat + LOGOUT_TOKEN_LIFETIME_S)
    .sign(key.privateKey);
}

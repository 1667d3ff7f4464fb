/**
 * WebAuthn through @simplewebauthn/server: security keys (`webauthn-roaming`) and this device's authenticator
 * (`webauthn-platform`) as a second factor, and passkeys (`passkey`, discoverable credentials) as a first
 * factor. The relying party is the tenant: its id is the host of the tenant's base URL, its origin that URL's
 * origin, so a credential made for another site (or an assertion made there) is refused.
 *
 * A ceremony is the challenge a hosted page sent to the browser, kept on the login transaction (0024) and
 * taken once by the answer (store/login-transactions.ts takeWebauthnCeremony): an answer cannot be replayed.
 * Checks on every assertion: the challenge, origin and RP id, the signature against the stored public key,
 * user verification (always for passkeys and platform authenticators; a security key as a second factor
 * needs presence only, the password having been the first factor), and the signature counter: one that
 * does not move forward (a cloned authenticator) is refused, and the stored counter moves by a conditional
 * write so that two assertions at once cannot both pass. Attestation is `none`: which authenticator model it
 * is does not matter here, and asking would prompt people for nothing.
 *
 * This factor does not fit factor.ts's `Factor` (an answer there is a string checked against an enrollment
 * alone); a WebAuthn answer also needs the challenge and the relying party, hence its own functions.
 */
import { createHash } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Kysely } from 'kysely';
import { randomAlphanumeric } from '../crypto/ids.js';
import { advanceSignCount, findEnrollmentByCredential, insertMfaEnrollment, type MfaEnrollment } from '../store/mfa-enrollments.js';
import type { Database, WebauthnEnrollmentType } from '../store/schema.js';
import type { Tenant } from '../store/tenants.js';

/** What people are given to answer a ceremony in. */
const TIMEOUT_MS = 5 * 60_000;
const TRANSPORTS: readonly string[] = ['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'];

export type CeremonyPurpose = 'login' | 'signup' | 'add-passkey' | 'mfa-enroll' | 'mfa-challenge';

/** What a page keeps on the login transaction between showing a ceremony and receiving its answer. */
export interface Ceremony {
  purpose: CeremonyPurpose;
  challenge: string;
  /** Registration: the kind of credential asked for. */
  kind?: WebauthnEnrollmentType;
  /** The user it is for (unknown for a passkey login; chosen ahead for a passkey signup). */
  userId?: string;
  /** A passkey signup: the address the account is to have. */
  email?: string;
  /** What the page hands the browser (PublicKeyCredential{Creation,Request}OptionsJSON). */
  options: PublicKeyCredentialCreationOptionsJSON | PublicKeyCredentialRequestOptionsJSON;
  expiresAt: number;
}

export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

export function relyingParty(tenant: Tenant): RelyingParty {
  const url = new URL(tenant.baseUrl);
  return { id: url.hostname, origin: url.origin, name: tenant.friendlyName || tenant.name };
}

/**
 * The WebAuthn user handle: 32 bytes derived from the user's id, the same for each of the user's credentials
 * (an authenticator then keeps one passkey per account), and saying nothing of the person.
 */
export function userHandle(tenantId: string, userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHash('sha256').update(`gatehouse-webauthn-user:${tenantId}:${userId}`).digest());
}

export function parseCeremony(value: string | undefined, now = Date.now()): Ceremony | undefined {
  if (!value) return undefined;
  try {
    const ceremony = JSON.parse(value) as Ceremony;
    return ceremony.expiresAt > now ? ceremony : undefined;
  } catch {
    return undefined;
  }
}

/** A new ceremony to register a credential of `kind` for a user (never one of `existing` again). */
export async function registrationCeremony(
  tenant: Tenant,
  purpose: CeremonyPurpose,
  kind: WebauthnEnrollmentType,
  user: { id: string; name: string },
  existing: MfaEnrollment[],
  now = Date.now(),
): Promise<Ceremony> {
  const rp = relyingParty(tenant);
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.name,
    userID: userHandle(tenant.id, user.id),
    attestationType: 'none',
    timeout: TIMEOUT_MS,
    excludeCredentials: existing.flatMap((e) => (e.credential ? [{ id: e.credential.id, transports: e.credential.transports as AuthenticatorTransportFuture[] }] : [])),
    authenticatorSelection: {
      // A passkey is found by the browser without a username: it must be discoverable.
      residentKey: kind === 'passkey' ? 'required' : 'preferred',
      userVerification: kind === 'webauthn-roaming' ? 'preferred' : 'required',
      ...(kind === 'webauthn-platform' && { authenticatorAttachment: 'platform' as const }),
      ...(kind === 'webauthn-roaming' && { authenticatorAttachment: 'cross-platform' as const }),
    },
    // ES256 and RS256, what authenticators make (EdDSA too).
    supportedAlgorithmIDs: [-7, -8, -257],
  });
  return { purpose, challenge: options.challenge, kind, userId: user.id, options, expiresAt: now + TIMEOUT_MS };
}

/**
 * A new ceremony to assert a credential: of the user's `allowed` ones (a second factor), or any discoverable
 * passkey of this site (a first factor: `allowed` undefined, the browser lists what it has).
 */
export async function authenticationCeremony(tenant: Tenant, purpose: CeremonyPurpose, allowed?: MfaEnrollment[], now = Date.now()): Promise<Ceremony> {
  const rp = relyingParty(tenant);
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    timeout: TIMEOUT_MS,
    userVerification: allowed?.every((e) => e.type === 'webauthn-roaming') ? 'preferred' : 'required',
    allowCredentials: (allowed ?? []).flatMap((e) => (e.credential ? [{ id: e.credential.id, transports: e.credential.transports as AuthenticatorTransportFuture[] }] : [])),
  });
  return { purpose, challenge: options.challenge, options, expiresAt: now + TIMEOUT_MS };
}

/** The browser's answer, from a form field; undefined when it is not one. */
function parseResponse<T extends RegistrationResponseJSON | AuthenticationResponseJSON>(value: string): T | undefined {
  if (value.length === 0 || value.length > 32_768) return undefined;
  try {
    const parsed = JSON.parse(value) as unknown;
    if (!parsed || typeof parsed !== 'object') return undefined;
    const r = parsed as Record<string, unknown>;
    if (typeof r.id !== 'string' || typeof r.rawId !== 'string' || r.type !== 'public-key' || !r.response || typeof r.response !== 'object') return undefined;
    return parsed as T;
  } catch {
    return undefined;
  }
}

/**
 * Checks the answer to a registration ceremony: the credential as a confirmed enrollment of `ceremony.kind`
 * for `userId`, not yet stored (saveRegistration). Undefined when the answer is wrong in any way (the
 * library's reason is not shown to the person: it is about their authenticator, nothing they can fix).
 */
export async function verifyRegistration(
  tenant: Tenant,
  ceremony: Ceremony,
  userId: string,
  answer: string,
  userAgent: string | undefined,
  now = Date.now(),
): Promise<MfaEnrollment | undefined> {
  const response = parseResponse<RegistrationResponseJSON>(answer);
  const kind = ceremony.kind;
  if (!response || !kind || ceremony.userId !== userId) return undefined;
  const rp = relyingParty(tenant);
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: ceremony.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: kind !== 'webauthn-roaming',
    });
  } catch {
    return undefined;
  }
  if (!verified.verified) return undefined;
  const info = verified.registrationInfo;
  const id = `${kind}|dev_${randomAlphanumeric(16)}`;
  const enrollment: MfaEnrollment = {
    id,
    tenantId: tenant.id,
    userId,
    type: kind,
    confirmed: true,
    secretSealed: null,
    codeHash: null,
    lastTimeStep: null,
    createdAt: now,
    confirmedAt: now,
    lastAuthAt: null,
    credential: {
      id: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      signCount: info.credential.counter,
      transports: (response.response.transports ?? []).filter((t) => TRANSPORTS.includes(t)),
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
      userAgent: userAgent ? userAgent.slice(0, 512) : null,
    },
  };
  return enrollment;
}

/** Keeps a verified credential; false when its id is already registered (the unique index), for anyone. */
export async function saveRegistration(db: Kysely<Database>, enrollment: MfaEnrollment): Promise<boolean> {
  try {
    await insertMfaEnrollment(db, enrollment);
    return true;
  } catch {
    return false;
  }
}

export type AssertionOutcome = { outcome: 'right'; enrollment: MfaEnrollment } | { outcome: 'wrong' };

/**
 * Checks the answer to an authentication ceremony: a credential of this tenant, of one of `types`, of
 * `userId` when the user is known (a second factor), signed over this challenge for this site, with user
 * verification where its type needs it, and a signature counter that moved forward.
 */
export async function completeAuthentication(
  db: Kysely<Database>,
  tenant: Tenant,
  ceremony: Ceremony,
  answer: string,
  accept: { types: readonly WebauthnEnrollmentType[]; userId?: string },
  now = Date.now(),
): Promise<AssertionOutcome> {
  const response = parseResponse<AuthenticationResponseJSON>(answer);
  if (!response) return { outcome: 'wrong' };
  const enrollment = await findEnrollmentByCredential(db, tenant.id, response.id);
  if (!enrollment?.credential || !accept.types.includes(enrollment.type as WebauthnEnrollmentType)) return { outcome: 'wrong' };
  if (accept.userId !== undefined && enrollment.userId !== accept.userId) return { outcome: 'wrong' };
  const rp = relyingParty(tenant);
  const stored = enrollment.credential;
  let newCounter: number;
  try {
    const verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: ceremony.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: { id: stored.id, publicKey: Buffer.from(stored.publicKey, 'base64url'), counter: stored.signCount, transports: stored.transports as AuthenticatorTransportFuture[] },
      requireUserVerification: enrollment.type !== 'webauthn-roaming',
    });
    if (!verified.verified) return { outcome: 'wrong' };
    newCounter = verified.authenticationInfo.newCounter;
  } catch {
    // Among the reasons: a counter that did not move forward (the library refuses it), a wrong signature,
    // another origin or RP id, no user verification.
    return { outcome: 'wrong' };
  }
  if (!(await advanceSignCount(db, enrollment.id, stored.signCount, newCounter, now))) return { outcome: 'wrong' };
  return { outcome: 'right', enrollment: { ...enrollment, lastAuthAt: now, credential: { ...stored, signCount: newCounter } } };
}

/** The `amr` value of a credential: a synced passkey is a software key, one bound to its device a hardware key. */
export function credentialAmr(enrollment: MfaEnrollment): 'hwk' | 'swk' {
  return enrollment.credential?.deviceType === 'multiDevice' ? 'swk' : 'hwk';
}

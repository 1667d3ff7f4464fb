/**
 * A user's second factors (mfa_enrollments, 0023). The checks that must not race are single conditional
 * writes, so that two requests carrying the same code cannot both succeed, on one node or many:
 *  - a TOTP code is accepted only by moving `last_time_step` forward (`advanceTimeStep`);
 *  - a recovery code is used up by deleting its row (`consumeRecoveryCode`).
 */
import type { Kysely } from 'kysely';
import type { Database, MfaEnrollmentsTable, MfaEnrollmentType } from './schema.js';

export interface MfaEnrollment {
  id: string;
  tenantId: string;
  userId: string;
  type: MfaEnrollmentType;
  confirmed: boolean;
  secretSealed: string | null;
  codeHash: string | null;
  lastTimeStep: number | null;
  createdAt: number;
  confirmedAt: number | null;
  lastAuthAt: number | null;
  /** WebAuthn enrollments only (0024). */
  credential?: WebauthnCredential;
}

/** A public-key credential (WebAuthn), as registered. */
export interface WebauthnCredential {
  /** base64url. */
  id: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  signCount: number;
  transports: string[];
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  userAgent: string | null;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

function fromRow(row: MfaEnrollmentsTable): MfaEnrollment {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    userId: row.user_id,
    type: row.type,
    confirmed: Number(row.confirmed) === 1,
    secretSealed: row.secret_sealed,
    codeHash: row.code_hash,
    lastTimeStep: num(row.last_time_step),
    createdAt: Number(row.created_at),
    confirmedAt: num(row.confirmed_at),
    lastAuthAt: num(row.last_auth_at),
    ...(row.credential_id && row.public_key
      ? {
          credential: {
            id: row.credential_id,
            publicKey: row.public_key,
            signCount: Number(row.sign_count ?? 0),
            transports: JSON.parse(row.transports ?? '[]') as string[],
            deviceType: row.device_type === 'multiDevice' ? 'multiDevice' : 'singleDevice',
            backedUp: Number(row.backed_up) === 1,
            userAgent: row.user_agent ?? null,
          },
        }
      : {}),
  };
}

function toRow(e: MfaEnrollment): MfaEnrollmentsTable {
  return {
    id: e.id,
    tenant_id: e.tenantId,
    user_id: e.userId,
    type: e.type,
    confirmed: e.confirmed ? 1 : 0,
    secret_sealed: e.secretSealed,
    code_hash: e.codeHash,
    last_time_step: e.lastTimeStep,
    created_at: e.createdAt,
    confirmed_at: e.confirmedAt,
    last_auth_at: e.lastAuthAt,
    ...(e.credential && {
      credential_id: e.credential.id,
      public_key: e.credential.publicKey,
      sign_count: e.credential.signCount,
      transports: JSON.stringify(e.credential.transports),
      device_type: e.credential.deviceType,
      backed_up: e.credential.backedUp ? 1 : 0,
      user_agent: e.credential.userAgent,
    }),
  };
}

export async function insertMfaEnrollment(db: Kysely<Database>, e: MfaEnrollment): Promise<void> {
  await db.insertInto('mfa_enrollments').values(toRow(e)).execute();
}

/**
 * A pending enrollment, unless the user has one of its type already (index mfa_enrollments_one_pending, 0040):
 * false when another request made one first, which the caller then resumes.
 */
export async function insertPendingMfaEnrollment(db: Kysely<Database>, e: MfaEnrollment): Promise<boolean> {
  const result = await db.insertInto('mfa_enrollments').values(toRow(e)).onConflict((oc) => oc.doNothing()).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Many enrollments in one statement (a user import's batch). */
export async function insertMfaEnrollments(db: Kysely<Database>, enrollments: MfaEnrollment[]): Promise<void> {
  if (enrollments.length > 0) await db.insertInto('mfa_enrollments').values(enrollments.map(toRow)).execute();
}

/** Which of `userIds` already have a confirmed enrollment of `type`. */
export async function usersEnrolledIn(db: Kysely<Database>, tenantId: string, userIds: string[], type: MfaEnrollmentType): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('mfa_enrollments')
    .select('user_id')
    .where('tenant_id', '=', tenantId)
    .where('type', '=', type)
    .where('confirmed', '=', 1)
    .where('user_id', 'in', userIds)
    .execute();
  return new Set(rows.map((r) => r.user_id));
}

/** The WebAuthn enrollment with this credential id in the tenant (whoever's it is: a passkey login starts from it). */
export async function findEnrollmentByCredential(db: Kysely<Database>, tenantId: string, credentialId: string): Promise<MfaEnrollment | undefined> {
  const row = await db.selectFrom('mfa_enrollments').selectAll().where('tenant_id', '=', tenantId).where('credential_id', '=', credentialId).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/**
 * Accepts a WebAuthn assertion: moves the credential's signature counter from `seen` (what the check was made
 * against) to `next`, only if no other request moved it meanwhile. False for the loser of two assertions at
 * once, so the counter check cannot be raced.
 */
export async function advanceSignCount(db: Kysely<Database>, id: string, seen: number, next: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('mfa_enrollments')
    .set({ sign_count: next, last_auth_at: now })
    .where('id', '=', id)
    .where('sign_count', '=', seen)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Every enrollment of a user, oldest first. */
export async function listMfaEnrollments(db: Kysely<Database>, tenantId: string, userId: string): Promise<MfaEnrollment[]> {
  const rows = await db.selectFrom('mfa_enrollments').selectAll().where('tenant_id', '=', tenantId).where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
  return rows.map(fromRow);
}

export async function findMfaEnrollment(db: Kysely<Database>, tenantId: string, userId: string, id: string): Promise<MfaEnrollment | undefined> {
  const row = await db.selectFrom('mfa_enrollments').selectAll().where('tenant_id', '=', tenantId).where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** One enrollment of the tenant by its id, whoever's it is (the reference's /guardian/enrollments/{id}). */
export async function findTenantMfaEnrollment(db: Kysely<Database>, tenantId: string, id: string): Promise<MfaEnrollment | undefined> {
  const row = await db.selectFrom('mfa_enrollments').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Deletes one enrollment; false when there was none. */
export async function deleteMfaEnrollment(db: Kysely<Database>, tenantId: string, userId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('mfa_enrollments').where('tenant_id', '=', tenantId).where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Deletes a user's enrollments (all, or those of one type); how many went. */
export async function deleteMfaEnrollments(db: Kysely<Database>, tenantId: string, userId: string, type?: MfaEnrollmentType): Promise<number> {
  let query = db.deleteFrom('mfa_enrollments').where('tenant_id', '=', tenantId).where('user_id', '=', userId);
  if (type) query = query.where('type', '=', type);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Accepts a TOTP code of time step `step`: moves the enrollment's last accepted step to it, confirming a pending
 * enrollment, only if `step` is newer than any accepted before. False when another request already used this
 * step or a later one (a replay).
 */
export async function advanceTimeStep(db: Kysely<Database>, id: string, step: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('mfa_enrollments')
    .set((eb) => ({
      last_time_step: step,
      last_auth_at: now,
      confirmed: 1,
      confirmed_at: eb.fn.coalesce('confirmed_at', eb.val(now)),
    }))
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_time_step', 'is', null), eb('last_time_step', '<', step)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Uses up the recovery code whose hash is `codeHash`: true for the one request that deleted it. */
export async function consumeRecoveryCode(db: Kysely<Database>, id: string, codeHash: string): Promise<boolean> {
  const result = await db.deleteFrom('mfa_enrollments').where('id', '=', id).where('type', '=', 'recovery-code').where('code_hash', '=', codeHash).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/**
 * WebAuthn (#14): security keys and platform authenticators as a second factor, passkeys as a first factor.
 *  - `mfa_enrollments` gains a public-key credential's fields, so a user's WebAuthn credentials are listed,
 *    read and deleted with their other authentication methods (types `webauthn-roaming`, `webauthn-platform`,
 *    `passkey`). The credential id is unique per tenant: a passkey login finds its user by it.
 *  - `login_transactions.webauthn_ceremony`: the ceremony a hosted page started (its challenge and purpose),
 *    kept on the transaction the page belongs to and taken once by the answer, so an answer is never
 *    accepted twice.
 *  - `mfa_challenges.email_code_*`: the one-time code last emailed for this second step (the email factor), as a
 *    hash, with its expiry and how many were sent.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('mfa_enrollments')
    /** base64url, as the authenticator gave it. */
    .addColumn('credential_id', 'text')
    .execute();
  await db.schema.alterTable('mfa_enrollments').addColumn('public_key', 'text').execute();
  /** The authenticator's signature counter at the last accepted use; a lower or equal one is a cloned key. */
  await db.schema.alterTable('mfa_enrollments').addColumn('sign_count', 'bigint').execute();
  /** JSON array of transports (usb, nfc, ble, internal, hybrid). */
  await db.schema.alterTable('mfa_enrollments').addColumn('transports', 'text').execute();
  /** single_device | multi_device (a synced passkey). */
  await db.schema.alterTable('mfa_enrollments').addColumn('device_type', 'text').execute();
  await db.schema.alterTable('mfa_enrollments').addColumn('backed_up', 'integer').execute();
  await db.schema.alterTable('mfa_enrollments').addColumn('user_agent', 'text').execute();
  await db.schema.createIndex('mfa_enrollments_credential').on('mfa_enrollments').columns(['tenant_id', 'credential_id']).unique().execute();
  await db.schema.alterTable('login_transactions').addColumn('webauthn_ceremony', 'text').execute();
  await db.schema.alterTable('mfa_challenges').addColumn('email_code_hash', 'text').execute();
  await db.schema.alterTable('mfa_challenges').addColumn('email_code_expires_at', 'bigint').execute();
  await db.schema.alterTable('mfa_challenges').addColumn('email_codes_sent', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['email_codes_sent', 'email_code_expires_at', 'email_code_hash']) await db.schema.alterTable('mfa_challenges').dropColumn(column).execute();
  await db.schema.alterTable('login_transactions').dropColumn('webauthn_ceremony').execute();
  await db.schema.dropIndex('mfa_enrollments_credential').execute();
  for (const column of ['user_agent', 'backed_up', 'device_type', 'transports', 'sign_count', 'public_key', 'credential_id']) {
    await db.schema.alterTable('mfa_enrollments').dropColumn(column).execute();
  }
}

/**
 * Gatehouse as a SAML identity provider (#12), what single logout and persistent NameIDs need to remember:
 *
 *  - `saml_session_participants`: each SAML application an SSO session signed in to, with the NameID and
 *    SessionIndex it was given, so a logout anywhere can send it a LogoutRequest it recognises;
 *  - `saml_logouts`: a single logout in progress (front-channel: the browser visits each participant in turn);
 *  - `saml_persistent_ids`: the persistent (pseudonymous, per application) NameID of a user, made on first use.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('saml_session_participants')
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('name_id', 'text', (c) => c.notNull())
    .addColumn('name_id_format', 'text', (c) => c.notNull())
    /** The SPNameQualifier sent with a persistent NameID (the audience), else null. */
    .addColumn('sp_name_qualifier', 'text')
    .addColumn('session_index', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    /** The session's absolute expiry: after it the row is purged. */
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('saml_session_participants_pk', ['session_id', 'client_id'])
    .execute();
  await db.schema.createIndex('saml_session_participants_expiry').on('saml_session_participants').column('expires_at').execute();

  await db.schema
    .createTable('saml_logouts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    /** JSON: the participants still to visit, the one asked now (and the ID of our LogoutRequest), how to finish. */
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('saml_logouts_expiry').on('saml_logouts').column('expires_at').execute();

  await db.schema
    .createTable('saml_persistent_ids')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('name_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('saml_persistent_ids_pk', ['tenant_id', 'client_id', 'user_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('saml_persistent_ids').execute();
  await db.schema.dropTable('saml_logouts').execute();
  await db.schema.dropTable('saml_session_participants').execute();
}

/**
 * Console setup links: the one-time, expiring links that make a person a console admin. Random 256-bit secrets;
 * only their SHA-256 is stored. A link for the first admin has no address (the person types theirs); an
 * invitation is bound to the address it was made for.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { randomSecret } from '../crypto/ids.js';
import type { ConsoleSetupLinksTable, Database } from '../store/schema.js';

/** A day, like a password reset link: long enough to read the start banner tomorrow morning. */
export const SETUP_LINK_LIFETIME_MS = 24 * 3_600_000;
/** Under /u with the other hosted pages (their form-outcome cookie is scoped to /u). */
export const CONSOLE_SETUP_PATH = '/u/console-setup';

const SECRET_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export type SetupLink = ConsoleSetupLinksTable;

function hashOf(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function setupUrl(baseUrl: string, secret: string): string {
  return `${baseUrl}${CONSOLE_SETUP_PATH}?ticket=${secret}`;
}

/** A new link's secret; `email` binds it to one address (an invitation). */
export async function issueSetupLink(db: Kysely<Database>, tenantId: string, email: string | null, now = Date.now()): Promise<string> {
  const secret = randomSecret(32);
  await db
    .insertInto('console_setup_links')
    .values({ token_hash: hashOf(secret), tenant_id: tenantId, email, created_at: now, expires_at: now + SETUP_LINK_LIFETIME_MS, used_at: null })
    .execute();
  return secret;
}

/** The link when it exists for this tenant, is unspent and unexpired. */
export async function findUsableSetupLink(db: Kysely<Database>, tenantId: string, secret: unknown, now = Date.now()): Promise<SetupLink | undefined> {
  if (typeof secret !== 'string' || !SECRET_FORMAT.test(secret)) return undefined;
  const link = await db.selectFrom('console_setup_links').selectAll().where('token_hash', '=', hashOf(secret)).where('tenant_id', '=', tenantId).executeTakeFirst();
  return link && link.used_at === null && Number(link.expires_at) > now ? link : undefined;
}

/** Spends the link; false when another request spent it first (two tabs, one link: one admin). */
export async function spendSetupLink(db: Kysely<Database>, link: SetupLink, now = Date.now()): Promise<boolean> {
  const spent = await db
    .updateTable('console_setup_links')
    .set({ used_at: now })
    .where('token_hash', '=', link.token_hash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(spent.numUpdatedRows) === 1;
}

/**
 * Gives back a link spent at `spentAt` whose account could not be made (a weak password, a taken address), so the
 * person can correct the form and use it again. The link is spent before the account is made: two tabs, one
 * link, one account.
 */
export async function releaseSetupLink(db: Kysely<Database>, link: SetupLink, spentAt: number): Promise<void> {
  await db.updateTable('console_setup_links').set({ used_at: null }).where('token_hash', '=', link.token_hash).where('used_at', '=', spentAt).execute();
}

/** Voids the tenant's open first-admin links (a new start prints a new one; the old one must stop working). */
export async function voidFirstAdminLinks(db: Kysely<Database>, tenantId: string, now = Date.now()): Promise<void> {
  await db.updateTable('console_setup_links').set({ used_at: now }).where('tenant_id', '=', tenantId).where('email', 'is', null).where('used_at', 'is', null).execute();
}

/**
 * Email addresses in the one form Gatehouse stores, compares and counts them (#19): two addresses that look
 * the same are the same user. Every door normalises with `normalizeEmail` before anything else (signup, the
 * Management API, every login, search, linking, passwordless, password reset, imports), and the store writes
 * and looks up only this form, so the unique index on (connection, email) holds one account per address.
 */

/**
 * Unicode NFKC (compatibility forms become their plain characters: full-width `ｕｓｅｒ＠ｅｘａｍｐｌｅ．ｃｏｍ` is
 * `user@example.com`, the ligature `ﬁ` is `fi`), then lower case, since the reference compares addresses
 * case-insensitively; NFKC once more because lower-casing can leave a sequence NFKC would still change, so the
 * function is idempotent. Surrounding white space goes. Login identifiers that are usernames take the same
 * path, so a login identifier is one key (for lookups and attack-protection counters) whatever its spelling.
 */
export function normalizeEmail(address: string): string {
  return address.normalize('NFKC').toLowerCase().normalize('NFKC').trim();
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Whether `address` (normalised) looks like an email address: something, `@`, a dotted domain, no spaces. */
export function isEmailAddress(address: string): boolean {
  return address.length <= 320 && EMAIL.test(address);
}

/**
 * `q` on GET /api/v2/users: the subset of the reference's Lucene-like syntax that SDK users send, compiled into
 * criteria the store answers from indexes (store/users.ts listUsers, store/user-search-terms.ts). Values match
 * case-insensitively, whole or by prefix (`value*`); a bare term matches the start of a word of the email,
 * name, nickname or username. Metadata fields (`user_metadata.plan:"gold"`, `app_metadata.tier:pro*`) match a
 * scalar value at that path (arrays: any element).
 */
import { normalizeEmail } from '../connections/email-address.js';
import { InvalidInput } from '../http/errors.js';
import { ANY_FIELD } from '../store/user-search-terms.js';
import type { UserCriteria } from '../store/users.js';

const SEARCH_FIELDS = [
  'email',
  'email.domain',
  'user_id',
  'name',
  'nickname',
  'given_name',
  'family_name',
  'username',
  'phone_number',
  'email_verified',
  'blocked',
  'identities.connection',
  'connection',
  'user_metadata.<field>',
  'app_metadata.<field>',
] as const;
type SearchField = Exclude<(typeof SEARCH_FIELDS)[number], `${string}<field>`>;
/** Fields whose values are among a user's search terms under the field's own name. */
const TERM_FIELDS = new Set<string>(['name', 'nickname', 'given_name', 'family_name', 'username', 'phone_number']);
const METADATA_FIELD = /^(user_metadata|app_metadata)\.[A-Za-z0-9_][A-Za-z0-9_.]*$/;

interface Search {
  criteria: UserCriteria;
  /** Names of connections the user's primary identity must be in. */
  connectionNames: string[];
}

/**
 * Bounds on one query, so that its cost (and the SQL built from it) stays small whatever is sent within the
 * 2,000 characters: terms joined, and terms that match by prefix (each reads a range of the index). Grouping
 * (parentheses) and OR/NOT are not supported at all, so nesting is bounded at none.
 */
export const SEARCH_LIMITS = { terms: 16, wildcards: 4 } as const;

const TOKEN =
  /\s*(?:(AND|OR|NOT|&&|\|\|)(?=[\s]|$)|([A-Za-z_][A-Za-z0-9_.]*):(?:"((?:[^"\\]|\\.)*)"|([^\s"()]+))|"((?:[^"\\]|\\.)*)"|([^\s"():]+))/y;

function badQuery(message: string): InvalidInput {
  return new InvalidInput('querystring', `q: ${message}`);
}

function unescape(quoted: string): string {
  return quoted.replace(/\\(.)/g, '$1');
}

function flag(value: string): boolean {
  if (value !== 'true' && value !== 'false') throw badQuery('email_verified and blocked take true or false');
  return value === 'true';
}

/** Sets an exact criterion; a second, different value of the same field matches nothing. */
function exactly<K extends 'email' | 'userId' | 'emailVerified' | 'blocked'>(criteria: UserCriteria, key: K, value: NonNullable<UserCriteria[K]>): void {
  if (criteria[key] === undefined) criteria[key] = value;
  else if (criteria[key] !== value) criteria.nothing = true;
}

function addTerm(criteria: UserCriteria, field: string, value: string, prefix: boolean): void {
  criteria.terms = [...(criteria.terms ?? []), { field, value, prefix }];
}

function addField(search: Search, field: string, value: string): void {
  const wildcard = value.endsWith('*');
  const literal = wildcard ? value.slice(0, -1) : value;
  if (literal.includes('*')) throw badQuery('a wildcard (*) may only end a value');
  const { criteria } = search;
  if (METADATA_FIELD.test(field) || TERM_FIELDS.has(field)) {
    addTerm(criteria, field, literal, wildcard);
    return;
  }
  switch (field as SearchField) {
    case 'email': {
      // Addresses are stored normalised, so the value is too: a full-width or upper-case spelling finds the user.
      const address = normalizeEmail(literal);
      if (wildcard) addTerm(criteria, 'email', address, true);
      else exactly(criteria, 'email', address);
      return;
    }
    case 'email.domain':
      if (wildcard) throw badQuery('email.domain takes a whole domain');
      addTerm(criteria, 'email.domain', normalizeEmail(literal), false);
      return;
    case 'user_id':
      if (!wildcard) exactly(criteria, 'userId', literal);
      else if (criteria.userIdPrefix === undefined || literal.startsWith(criteria.userIdPrefix)) criteria.userIdPrefix = literal;
      else if (!criteria.userIdPrefix.startsWith(literal)) criteria.nothing = true;
      return;
    case 'email_verified':
      exactly(criteria, 'emailVerified', flag(value));
      return;
    case 'blocked':
      exactly(criteria, 'blocked', flag(value));
      return;
    case 'identities.connection':
    case 'connection':
      if (wildcard) throw badQuery(`${field} takes a whole connection name`);
      search.connectionNames.push(literal);
      return;
    default:
      throw badQuery(`searching by ${field} is not supported; fields: ${SEARCH_FIELDS.join(', ')}`);
  }
}

/** A bare term: the start of a word of the email, name, nickname or username. */
function addBareTerm(search: Search, term: string): void {
  const text = term.replace(/\*+$/, '');
  if (text.includes('*')) throw badQuery('a wildcard (*) may only end a term');
  if (text) addTerm(search.criteria, ANY_FIELD, text, true);
}

/**
 * Parses the subset of the Lucene-like syntax that SDK users send: `field:value`, `field:"quoted value"`,
 * bare terms, joined by spaces or AND (all must match); a value may end with `*` for a prefix match. Within
 * SEARCH_LIMITS, or a 400.
 */
export function parseUserSearch(q: string | undefined): Search {
  const search: Search = { criteria: {}, connectionNames: [] };
  if (q === undefined) return search;
  TOKEN.lastIndex = 0;
  let position = 0;
  let terms = 0;
  let wildcards = 0;
  while (position < q.length) {
    if (/^\s*$/.test(q.slice(position))) break;
    TOKEN.lastIndex = position;
    const match = TOKEN.exec(q);
    if (!match) {
      const rest = q.slice(position).trimStart();
      if (rest.startsWith('(') || rest.startsWith(')')) throw badQuery('grouping with parentheses is not supported; terms are joined with AND');
      throw badQuery(`cannot read the query near "${rest.slice(0, 20)}"`);
    }
    position = TOKEN.lastIndex;
    const [, operator, field, quotedValue, plainValue, quotedTerm, plainTerm] = match;
    if (operator) {
      if (operator === 'AND' || operator === '&&') continue;
      throw badQuery(`${operator} is not supported; terms are joined with AND`);
    }
    if (++terms > SEARCH_LIMITS.terms) throw badQuery(`the query is too complex: at most ${SEARCH_LIMITS.terms} terms`);
    if ((quotedValue ?? plainValue ?? quotedTerm ?? plainTerm ?? '').endsWith('*') && ++wildcards > SEARCH_LIMITS.wildcards) {
      throw badQuery(`the query is too complex: at most ${SEARCH_LIMITS.wildcards} terms with a wildcard (*)`);
    }
    if (field !== undefined) {
      addField(search, field, quotedValue !== undefined ? unescape(quotedValue) : plainValue!);
      continue;
    }
    addBareTerm(search, quotedTerm !== undefined ? unescape(quotedTerm) : plainTerm!);
  }
  return search;
}

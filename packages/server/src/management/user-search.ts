/**
 * `q` on GET /api/v2/users: the subset of the reference's Lucene-like syntax that SDK users send, read into SQL
 * criteria (what the store can narrow by) and exact matchers (what it cannot).
 */
import { normalizeEmail } from '../connections/email-address.js';
import { InvalidInput } from '../http/errors.js';
import type { User, UserCriteria } from '../store/users.js';
import { displayName, displayNickname } from './user-view.js';

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
] as const;
type SearchField = (typeof SEARCH_FIELDS)[number];

type Matcher = (user: User) => boolean;

interface Search {
  criteria: UserCriteria;
  /** Exact checks the SQL criteria cannot make; when there are any, the list is filtered here before paging. */
  matchers: Matcher[];
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

/** Case-insensitive equality, or a prefix match when the value ends with `*`. */
function textMatcher(read: (user: User) => string | null | undefined, value: string): Matcher {
  const wanted = value.toLowerCase();
  if (wanted.endsWith('*')) {
    const prefix = wanted.slice(0, -1);
    return (user) => (read(user) ?? null)?.toLowerCase().startsWith(prefix) ?? false;
  }
  return (user) => (read(user) ?? null)?.toLowerCase() === wanted;
}

function flagMatcher(read: (user: User) => boolean, value: string): Matcher {
  if (value !== 'true' && value !== 'false') throw badQuery('email_verified and blocked take true or false');
  return (user) => read(user) === (value === 'true');
}

function addField(search: Search, field: SearchField, value: string): void {
  const wildcard = value.endsWith('*');
  const literal = wildcard ? value.slice(0, -1) : value;
  if (literal.includes('*')) throw badQuery('a wildcard (*) may only end a value');
  const prefilter = () => {
    if (literal) search.criteria.containsAll = [...(search.criteria.containsAll ?? []), literal];
  };
  switch (field) {
    case 'email': {
      // Addresses are stored normalised, so the value is too: a full-width or upper-case spelling finds the user.
      const address = normalizeEmail(literal);
      if (wildcard) {
        if (address) search.criteria.containsAll = [...(search.criteria.containsAll ?? []), address];
        search.matchers.push(textMatcher((u) => u.email, `${address}*`));
      } else if (search.criteria.email === undefined || search.criteria.email === address) {
        search.criteria.email = address;
      } else {
        search.matchers.push(() => false);
      }
      return;
    }
    case 'email.domain':
      if (wildcard) throw badQuery('email.domain takes a whole domain');
      search.criteria.emailDomain = normalizeEmail(literal);
      return;
    case 'user_id':
      if (wildcard) {
        prefilter();
        search.matchers.push((u) => u.user_id.startsWith(literal));
      } else if (search.criteria.userId === undefined || search.criteria.userId === literal) {
        search.criteria.userId = literal;
      } else {
        search.matchers.push(() => false);
      }
      return;
    case 'name':
      prefilter();
      search.matchers.push(textMatcher(displayName, value));
      return;
    case 'nickname':
      prefilter();
      search.matchers.push(textMatcher(displayNickname, value));
      return;
    case 'given_name':
    case 'family_name':
      prefilter();
      search.matchers.push(textMatcher((u) => u.profile[field], value));
      return;
    case 'username':
    case 'phone_number':
      prefilter();
      search.matchers.push(textMatcher((u) => u[field], value));
      return;
    case 'email_verified':
      search.matchers.push(flagMatcher((u) => u.email_verified, value));
      return;
    case 'blocked':
      search.matchers.push(flagMatcher((u) => u.blocked, value));
      return;
    case 'identities.connection':
    case 'connection':
      if (wildcard) throw badQuery(`${field} takes a whole connection name`);
      search.connectionNames.push(literal);
      return;
  }
}

/** A bare term: a case-insensitive substring of the email, name, nickname or username. */
function addTerm(search: Search, term: string): void {
  const text = term.replace(/\*+$/, '');
  if (text.includes('*')) throw badQuery('a wildcard (*) may only end a term');
  if (!text) return;
  const wanted = text.toLowerCase();
  search.criteria.containsAll = [...(search.criteria.containsAll ?? []), text];
  search.matchers.push((u) =>
    [u.email, displayName(u), displayNickname(u), u.username].some((value) => value?.toLowerCase().includes(wanted)),
  );
}

/**
 * Parses the subset of the Lucene-like syntax that SDK users send: `field:value`, `field:"quoted value"`,
 * bare terms, joined by spaces or AND (all must match); a value may end with `*` for a prefix match.
 */
export function parseUserSearch(q: string | undefined): Search {
  const search: Search = { criteria: {}, matchers: [], connectionNames: [] };
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
      if (!(SEARCH_FIELDS as readonly string[]).includes(field)) {
        throw badQuery(`searching by ${field} is not supported; fields: ${SEARCH_FIELDS.join(', ')}`);
      }
      addField(search, field as SearchField, quotedValue !== undefined ? unescape(quotedValue) : plainValue!);
      continue;
    }
    addTerm(search, quotedTerm !== undefined ? unescape(quotedTerm) : plainTerm!);
  }
  return search;
}

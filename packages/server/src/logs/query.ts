/**
 * `q` of GET /api/v2/logs: the reference's Lucene query-string syntax, parsed by `lucene` (a PEG grammar of the
 * syntax; we only turn its tree into SQL). Supported: `field:value`, `field:"quoted value"`, `field:*` (has a
 * value), `field:(a OR b)`, AND / OR / NOT / `-field:value`, parentheses, and ranges `date:[2024-01-01 TO *]`,
 * `date:{… TO …}`, `log_id:[… TO …]`.
 *
 * Only fields with an index can be searched (type, user_id, user_name, client_id, connection, ip) plus `date` and
 * `log_id`, which both read the (tenant_id, log_id) index since log ids are time-ordered: a search never walks a
 * tenant's logs row by row. Anything else is a 400 that names the fields, never a slow scan or a silent miss.
 * Values match exactly; wildcards other than `field:*` and fuzzy/proximity/regex forms are refused.
 */
import { parse, type LuceneAst, type LuceneNode, type LuceneRange, type LuceneTerm } from 'lucene';
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import { InvalidInput } from '../http/errors.js';
import type { Database } from '../store/schema.js';
import { logIdAt } from './log-event.js';

/** As the indexes of migration 0021. */
export const SEARCHABLE_FIELDS = ['type', 'user_id', 'user_name', 'client_id', 'connection', 'ip'] as const;
type SearchableField = (typeof SEARCHABLE_FIELDS)[number];
const ALL_FIELDS = [...SEARCHABLE_FIELDS, 'date', 'log_id'];

type Eb = ExpressionBuilder<Database, 'logs'>;
export type LogFilter = (eb: Eb) => Expression<SqlBool>;

const MAX_QUERY_NODES = 100;

function refuse(message: string): never {
  throw new InvalidInput('querystring', `q: ${message}`);
}

function isRange(node: LuceneAst): node is LuceneRange {
  return 'term_min' in node;
}

function isTerm(node: LuceneAst): node is LuceneTerm {
  return 'term' in node;
}

/** A date or date-time as epoch milliseconds; a bare date is the day's first millisecond (UTC). */
function instant(value: string): number {
  const millis = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00.000Z`) : Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(millis)) refuse(`${JSON.stringify(value.slice(0, 40))} is not a date (use 2024-01-31 or an ISO 8601 date-time)`);
  return millis;
}

/** The first millisecond after `value`: the next day for a bare date, the next millisecond otherwise. */
function after(value: string): number {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) ? instant(value) + 86_400_000 : instant(value) + 1;
}

function fieldOf(raw: string | undefined, inherited: string | undefined): { field: string; negated: boolean } {
  let name = raw === undefined || raw === '<implicit>' ? inherited : raw;
  let negated = false;
  if (name?.startsWith('-')) {
    negated = true;
    name = name.slice(1);
  } else if (name?.startsWith('+')) name = name.slice(1);
  if (!name) refuse(`name a field for every value (${ALL_FIELDS.join(', ')})`);
  if (!ALL_FIELDS.includes(name)) refuse(`cannot search by ${JSON.stringify(name.slice(0, 60))}; searchable fields: ${ALL_FIELDS.join(', ')}`);
  return { field: name, negated };
}

function termFilter(node: LuceneTerm, inherited: string | undefined): LogFilter {
  const named = fieldOf(node.field, inherited);
  const field = named.field;
  let negated = named.negated;
  if (node.regex || node.similarity || node.proximity) refuse('regular expressions, fuzzy and proximity searches are not supported');
  const value = node.term;
  let filter: LogFilter;
  if (!node.quoted && value === '*') {
    if (field === 'date' || field === 'log_id') filter = (eb) => eb.lit(true);
    else filter = (eb) => eb(field as SearchableField, 'is not', null);
  } else if (!node.quoted && /[*?]/.test(value)) {
    refuse('wildcards other than field:* are not supported; values match exactly');
  } else if (field === 'date') {
    const from = logIdAt(instant(value));
    const to = logIdAt(after(value));
    filter = (eb) => eb.and([eb('log_id', '>=', from), eb('log_id', '<', to)]);
  } else {
    filter = (eb) => eb(field as SearchableField | 'log_id', '=', value);
  }
  if (node.prefix === '-') negated = !negated;
  return negated ? (eb) => eb.not(filter(eb)) : filter;
}

function rangeFilter(node: LuceneRange, inherited: string | undefined): LogFilter {
  const { field, negated } = fieldOf(node.field, inherited);
  if (field !== 'date' && field !== 'log_id') refuse(`ranges are for date and log_id, not ${field}`);
  const lowInclusive = node.inclusive === 'both' || node.inclusive === 'left';
  const highInclusive = node.inclusive === 'both' || node.inclusive === 'right';
  const bounds: LogFilter[] = [];
  if (node.term_min !== '*') {
    const low = field === 'date' ? logIdAt(lowInclusive ? instant(node.term_min) : after(node.term_min)) : node.term_min;
    bounds.push((eb) => eb('log_id', field === 'log_id' && !lowInclusive ? '>' : '>=', low));
  }
  if (node.term_max !== '*') {
    const high = field === 'date' ? logIdAt(highInclusive ? after(node.term_max) : instant(node.term_max)) : node.term_max;
    bounds.push((eb) => eb('log_id', field === 'log_id' && highInclusive ? '<=' : '<', high));
  }
  const filter: LogFilter = (eb) => eb.and(bounds.map((b) => b(eb)));
  return negated ? (eb) => eb.not(filter(eb)) : filter;
}

function nodeFilter(node: LuceneAst, inherited: string | undefined, budget: { nodes: number }): LogFilter {
  if (++budget.nodes > MAX_QUERY_NODES) refuse(`at most ${MAX_QUERY_NODES} terms`);
  if (isRange(node)) return rangeFilter(node, inherited);
  if (isTerm(node)) return termFilter(node, inherited);
  const group = node as LuceneNode;
  let field = inherited;
  let negateGroup = false;
  if (group.field !== undefined && group.field !== '<implicit>') {
    const named = fieldOf(group.field, inherited);
    field = named.field;
    negateGroup = named.negated;
  }
  if (!group.left) refuse('empty query');
  const left = nodeFilter(group.left, field, budget);
  const leftFilter: LogFilter = group.start === 'NOT' ? (eb) => eb.not(left(eb)) : left;
  let combined = leftFilter;
  if (group.right) {
    const right = nodeFilter(group.right, field, budget);
    const operator = (group.operator ?? '<implicit>').toUpperCase();
    // The reference joins unmarked clauses with AND.
    if (operator === 'OR') combined = (eb) => eb.or([leftFilter(eb), right(eb)]);
    else if (operator === 'AND NOT' || operator === 'NOT') combined = (eb) => eb.and([leftFilter(eb), eb.not(right(eb))]);
    else if (operator === 'OR NOT') combined = (eb) => eb.or([leftFilter(eb), eb.not(right(eb))]);
    else if (operator === 'AND' || operator === '<IMPLICIT>' || operator === '&&') combined = (eb) => eb.and([leftFilter(eb), right(eb)]);
    else if (operator === '||') combined = (eb) => eb.or([leftFilter(eb), right(eb)]);
    else refuse(`unknown operator ${operator}`);
  }
  return negateGroup ? (eb) => eb.not(combined(eb)) : combined;
}

/** The filter of a `q`, or undefined for an empty one; a 400 for anything it cannot answer from an index. */
export function parseLogQuery(q: string | undefined): LogFilter | undefined {
  if (q === undefined || q.trim() === '') return undefined;
  let ast: LuceneNode;
  try {
    ast = parse(q);
  } catch (error) {
    refuse(`not a valid query (${(error as Error).message.slice(0, 200)})`);
  }
  return nodeFilter(ast, undefined, { nodes: 0 });
}

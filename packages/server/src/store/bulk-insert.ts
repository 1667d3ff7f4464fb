/**
 * Inserts of many rows at once (an import's batch: its users, their search terms, their events), as SQL built
 * once per table and shape and then run with parameters only.
 *
 * Kysely's insert builder makes an operation node per value, freezes it and compiles the tree on every call: at
 * twenty rows per imported user (the user, its search terms, its event) that was more CPU than SQLite's own work
 * for them. And its multi-row statements had as many shapes as a batch had row counts, each prepared anew. Here:
 *  - SQLite: `INSERT … VALUES (?, …), (?, …)` in chunks of a few fixed sizes (SQLITE_CHUNKS), so that a handful
 *    of statement texts cover every count and stay prepared in the store's statement cache (store/db.ts);
 *  - PostgreSQL: one `INSERT … SELECT * FROM unnest($1::text[], …)`, one array parameter per column: one
 *    statement text whatever the count, and no limit on bound parameters to chunk around.
 */
import { CompiledQuery, PostgresAdapter, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** A column's PostgreSQL type, which unnest's array parameter is cast to (SQLite binds values as they come). */
export type ColumnType = 'text' | 'integer' | 'bigint';

/** A table written in bulk: its columns in statement order, with their types. */
export interface BulkTable<T extends keyof Database> {
  table: T;
  columns: { readonly [K in keyof Database[T] & string]-?: ColumnType };
}

/**
 * Rows per SQLite statement, largest first: a count is written as so many of the first, then of the next, and so
 * on (1,000 rows: 3 × 256, 3 × 64, 2 × 16, 2 × 4). 256 rows of 20 columns stay far below SQLite's 32,766 bound
 * parameters.
 */
const SQLITE_CHUNKS = [256, 64, 16, 4, 1] as const;

/** Rows per PostgreSQL statement: bounds one message's size, not a parameter count. */
const POSTGRES_ROWS = 10_000;

const quote = (name: string) => `"${name}"`;

/** The statement texts of a table, built on first use. */
class Statements {
  readonly #names: string[];
  readonly #head: string;
  readonly #sqlite = new Map<number, string>();
  #postgres: string | undefined;

  constructor(
    table: string,
    readonly columns: readonly [string, ColumnType][],
  ) {
    this.#names = columns.map(([name]) => name);
    this.#head = `insert into ${quote(table)} (${this.#names.map(quote).join(', ')})`;
  }

  sqlite(rows: number): string {
    let text = this.#sqlite.get(rows);
    if (text === undefined) {
      const tuple = `(${this.#names.map(() => '?').join(', ')})`;
      text = `${this.#head} values ${Array.from({ length: rows }, () => tuple).join(', ')}`;
      this.#sqlite.set(rows, text);
    }
    return text;
  }

  postgres(): string {
    this.#postgres ??= `${this.#head} select * from unnest(${this.columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')})`;
    return this.#postgres;
  }
}

const statements = new WeakMap<object, Statements>();

function statementsOf(spec: BulkTable<keyof Database>): Statements {
  let found = statements.get(spec);
  if (!found) {
    found = new Statements(spec.table, Object.entries(spec.columns) as [string, ColumnType][]);
    statements.set(spec, found);
  }
  return found;
}

/** Inserts the rows (inside the caller's transaction when it needs them together with other writes). */
export async function insertRows<T extends keyof Database>(db: Kysely<Database>, spec: BulkTable<T>, rows: readonly Database[T][]): Promise<void> {
  if (rows.length === 0) return;
  const table = statementsOf(spec as unknown as BulkTable<keyof Database>);
  const names = table.columns.map(([name]) => name);
  const values = rows as unknown as readonly Record<string, unknown>[];
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    for (let start = 0; start < values.length; start += POSTGRES_ROWS) {
      const slice = values.slice(start, start + POSTGRES_ROWS);
      await db.executeQuery(CompiledQuery.raw(table.postgres(), names.map((name) => slice.map((row) => row[name] ?? null))));
    }
    return;
  }
  let start = 0;
  for (const size of SQLITE_CHUNKS) {
    while (values.length - start >= size) {
      const parameters: unknown[] = [];
      for (let i = start; i < start + size; i++) {
        const row = values[i]!;
        for (const name of names) parameters.push(row[name] ?? null);
      }
      await db.executeQuery(CompiledQuery.raw(table.sqlite(size), parameters));
      start += size;
    }
  }
}

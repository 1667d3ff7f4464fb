/**
 * Queries on the login path built through Kysely once per dialect, then run with new values only.
 *
 * Kysely builds an operation tree, freezes it and compiles it to SQL on every call. At a login's rate (tens per
 * second per process) that code never leaves V8's baseline tier, and the profile of a password login put the
 * building of its three small statements (brute-force blocks, the user, the login count) beside SQLite's work
 * for them. The SQL text of such a query depends only on the dialect, so it is compiled once with a marker in
 * place of each value, and each call swaps the markers in the parameter list for the values.
 */
import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';
import type { Database } from './schema.js';

/** A marker no real value equals: a NUL, which no identifier, id or email the server accepts contains. */
const marker = (name: string) => `\u0000compiled-once:${name}`;

export interface CompiledOnce<Name extends string, Row> {
  /** Runs the query in `db` (a transaction too) with `values` in place of the markers. */
  execute(db: Kysely<Database>, values: Readonly<Record<Name, unknown>>): Promise<QueryResult<Row>>;
}

/**
 * `build` makes the query with `slot(name)` wherever a value goes (typed as the column's value: it is a marker); it runs once per dialect (a database's
 * transactions share its adapter, so they share the compiled text). Each slot must be a bound parameter that
 * Kysely passes through as given (`=`, `>`, a `set` value), never part of a list or an identifier.
 */
export function compiledOnce<Name extends string, Row>(
  names: readonly Name[],
  build: (db: Kysely<Database>, slot: <Value = string>(name: Name) => Value) => Compilable<Row>,
): CompiledOnce<Name, Row> {
  const compiled = new WeakMap<object, { query: CompiledQuery<Row>; slots: (Name | undefined)[] }>();
  const byMarker = new Map<unknown, Name>(names.map((name) => [marker(name), name]));
  return {
    async execute(db, values) {
      const adapter = db.getExecutor().adapter;
      let entry = compiled.get(adapter);
      if (!entry) {
        const query = build(db, <Value>(name: Name) => marker(name) as Value).compile();
        const slots = query.parameters.map((parameter) => byMarker.get(parameter));
        const missing = names.filter((name) => !slots.includes(name));
        if (missing.length > 0) throw new Error(`compiledOnce: no parameter for ${missing.join(', ')}`);
        entry = { query, slots };
        compiled.set(adapter, entry);
      }
      const { query, slots } = entry;
      const parameters = query.parameters.map((parameter, i) => {
        const name = slots[i];
        return name === undefined ? parameter : values[name];
      });
      return db.executeQuery<Row>({ ...query, parameters });
    },
  };
}

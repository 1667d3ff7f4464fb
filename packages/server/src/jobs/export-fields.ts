/**
 * What an export writes of each user (the reference's users-exports `fields`): each field names a property of
 * the user as the Management API shows it, by a path (`email`, `user_metadata.plan`, `identities[0].connection`),
 * and is written under its `export_as` name or, without one, its path.
 *
 *  - json: NDJSON, one object per user per line, metadata and identities as objects; a field the user lacks is
 *    left out of its line.
 *  - csv: a header line, then one line per user. Strings are escaped against CSV injection as the reference does
 *    (OWASP): the value is prefixed with `'`, its double quotes doubled, and the whole wrapped in double quotes;
 *    the ISO dates the server writes are left as they are. Objects are written as JSON text, escaped the same way.
 *    At most 30 fields, and not app_metadata, user_metadata or identities whole: name their fields instead.
 */
export interface ExportField {
  name: string;
  export_as?: string | undefined;
}

export type ExportFormat = 'json' | 'csv';

export const MAX_CSV_FIELDS = 30;

const OBJECT_FIELDS = new Set(['app_metadata', 'user_metadata', 'identities']);

const PROFILE_FIELDS = [
  'user_id',
  'email',
  'email_verified',
  'username',
  'phone_number',
  'phone_verified',
  'name',
  'given_name',
  'family_name',
  'nickname',
  'picture',
  'created_at',
  'updated_at',
  'last_login',
  'last_ip',
  'logins_count',
  'blocked',
];

/** The fields written when a request names none. */
export function defaultFields(format: ExportFormat): ExportField[] {
  const names = format === 'json' ? [...PROFILE_FIELDS, 'identities', 'app_metadata', 'user_metadata'] : PROFILE_FIELDS;
  return names.map((name) => ({ name }));
}

/** What is wrong with the requested fields for the format, or undefined. */
export function fieldsProblem(fields: readonly ExportField[], format: ExportFormat): string | undefined {
  if (fields.length === 0) return 'fields must name at least one field';
  const names = new Set<string>();
  for (const field of fields) {
    const column = field.export_as ?? field.name;
    if (names.has(column)) return `two fields are written as "${column}"`;
    names.add(column);
  }
  if (format === 'csv') {
    if (fields.length > MAX_CSV_FIELDS) return `a CSV export has at most ${MAX_CSV_FIELDS} fields`;
    const whole = fields.find((f) => OBJECT_FIELDS.has(f.name));
    if (whole) return `a CSV export cannot hold ${whole.name} as a single object: name its fields (e.g. ${whole.name === 'identities' ? 'identities[0].connection' : `${whole.name}.plan`}) or use the json format`;
  }
  return undefined;
}

/** `identities[0].connection` → ['identities', 0, 'connection']. */
function pathOf(name: string): (string | number)[] {
  const steps: (string | number)[] = [];
  for (const part of name.split('.')) {
    const match = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!match) {
      steps.push(part);
      continue;
    }
    if (match[1]) steps.push(match[1]);
    for (const index of match[2]!.matchAll(/\[(\d+)\]/g)) steps.push(Number(index[1]));
  }
  return steps;
}

function valueAt(view: Record<string, unknown>, path: readonly (string | number)[]): unknown {
  let node: unknown = view;
  for (const step of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[step];
  }
  return node;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function csvCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (typeof value === 'string' && ISO_DATE.test(value)) return value;
  return `"'${text.replace(/"/g, '""')}"`;
}

/** Writes users (as the Management API shows them) in one format, with the header first for CSV. */
export class ExportWriter {
  readonly #fields: readonly ExportField[];
  readonly #format: ExportFormat;
  /** Each field's path, read once rather than per user. */
  readonly #paths: readonly (string | number)[][];

  constructor(format: ExportFormat, fields: readonly ExportField[]) {
    this.#format = format;
    this.#fields = fields;
    this.#paths = fields.map((f) => pathOf(f.name));
  }

  header(): string {
    if (this.#format === 'json') return '';
    return this.#fields.map((f) => `"${(f.export_as ?? f.name).replace(/"/g, '""')}"`).join(',') + '\n';
  }

  line(view: Record<string, unknown>): string {
    if (this.#format === 'csv') return this.#paths.map((path) => csvCell(valueAt(view, path))).join(',') + '\n';
    const out: Record<string, unknown> = {};
    this.#fields.forEach((field, i) => {
      const value = valueAt(view, this.#paths[i]!);
      if (value !== undefined) out[field.export_as ?? field.name] = value;
    });
    return JSON.stringify(out) + '\n';
  }
}

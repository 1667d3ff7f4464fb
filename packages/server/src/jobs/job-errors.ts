/** The users an import refused, as one JSON array built a page at a time (an import may refuse millions). */
import type { Kysely } from 'kysely';
import { listJobErrors } from '../store/jobs.js';
import type { Database } from '../store/schema.js';

const PAGE = 1000;

export async function* jobErrorsDocument(db: Kysely<Database>, jobId: string): AsyncGenerator<string> {
  let after = -1;
  let first = true;
  yield '[';
  for (;;) {
    const rows = await listJobErrors(db, jobId, after, PAGE);
    for (const row of rows) {
      yield `${first ? '' : ','}\n{"user":${row.user},"errors":${row.errors}}`;
      first = false;
    }
    if (rows.length < PAGE) break;
    after = rows.at(-1)!.position;
  }
  yield first ? ']' : '\n]\n';
}

/**
 * The reference's two paging styles (B.4), over a list already filtered for the caller:
 *  - offset: `page` (0-based), `per_page` (≤100), `include_totals` → a plain array, or with include_totals
 *    `{ start, limit, length, total, <collection> }`;
 *  - checkpoint: `from` (opaque) and `take` (≤100) → `{ <collection>, next? }`, `next` absent on the last page.
 * With neither, the whole list (capped at 50, as the reference's default page) is a plain array.
 */
import { Type, type Static, type TSchema, type TUnsafe } from '@fastify/type-provider-typebox';
import { InvalidInput } from '../http/errors.js';
import { asSent } from '../http/responses.js';

/** Spread into a route's querystring object next to its own filters. */
export const pagingFields = {
  page: Type.Optional(Type.Integer({ minimum: 0 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  include_totals: Type.Optional(Type.Boolean()),
  from: Type.Optional(Type.String({ maxLength: 200 })),
  take: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
};
export const PagingQuery = Type.Object(pagingFields, { additionalProperties: false });
export type PagingQuery = Static<typeof PagingQuery>;

const DEFAULT_PER_PAGE = 50;
/** Offset paging stops here, as in the reference; checkpoint paging goes further. */
const OFFSET_LIMIT = 1000;

function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

function decodeCursor(from: string): number {
  const text = Buffer.from(from, 'base64url').toString('utf8');
  const offset = /^o:(\d{1,9})$/.exec(text)?.[1];
  if (offset === undefined) throw new InvalidInput('querystring', 'from: not a cursor returned by this API');
  return Number(offset);
}

/** Which slice of the whole list a query asks for; stores that page in SQL read exactly this window. */
export interface PageWindow {
  checkpoint: boolean;
  offset: number;
  limit: number;
}

export function pageWindow(query: PagingQuery): PageWindow {
  if (query.from !== undefined || query.take !== undefined) {
    return { checkpoint: true, offset: query.from ? decodeCursor(query.from) : 0, limit: query.take ?? DEFAULT_PER_PAGE };
  }
  const perPage = query.per_page ?? DEFAULT_PER_PAGE;
  const page = query.page ?? 0;
  if (page * perPage >= OFFSET_LIMIT) {
    throw new InvalidInput(
      'querystring',
      `Requesting page ${page} exceeds the allowed maximum of ${OFFSET_LIMIT} records; use the checkpoint pagination method (from, take)`,
    );
  }
  return { checkpoint: false, offset: page * perPage, limit: perPage };
}

/** The response for one window: `items` is that window's slice of a list of `total` items. */
export function pageBody<T>(window: PageWindow, query: PagingQuery, items: T[], total: number, collection: string): T[] | Record<string, unknown> {
  if (window.checkpoint) {
    const end = window.offset + window.limit;
    return { [collection]: items, ...(end < total && { next: encodeCursor(end) }) };
  }
  if (!query.include_totals) return items;
  return { start: window.offset, limit: window.limit, length: items.length, total, [collection]: items };
}

/** Pages a list that is already in memory. */
export function paginate<T>(items: readonly T[], query: PagingQuery, collection: string): T[] | Record<string, unknown> {
  const window = pageWindow(query);
  return pageBody(window, query, items.slice(window.offset, window.offset + window.limit), items.length, collection);
}

/**
 * The documented body of a paged list (see pageBody): a plain array, or with `include_totals` the page and its
 * totals, or with checkpoint paging the page and `next`. Sent as built (asSent), not through this schema.
 */
export function pagedList(item: TSchema, collection: string): TUnsafe<unknown> {
  const items = Type.Array(item);
  return Type.Unsafe<unknown>(asSent(
    Type.Union(
      [
        items,
        Type.Object({ start: Type.Integer(), limit: Type.Integer(), length: Type.Integer(), total: Type.Integer(), [collection]: items }, { title: 'With totals' }),
        Type.Object({ [collection]: items, next: Type.Optional(Type.String({ description: 'The `from` of the next page; absent on the last' })) }, { title: 'Checkpoint page' }),
      ],
      { description: `The ${collection}: an array, or with include_totals the page and its totals, or with from/take a checkpoint page` },
    ),
  ));
}

/** The documented body of a list that is always a checkpoint page: `{ <collection>, next? }`. */
export function checkpointList(item: TSchema, collection: string): TUnsafe<unknown> {
  return Type.Unsafe<unknown>(
    asSent(Type.Object({ [collection]: Type.Array(item), next: Type.Optional(Type.String({ description: 'The `from` of the next page; absent on the last' })) })),
  );
}

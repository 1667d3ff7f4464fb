/**
 * A list from the Management API, one page at a time (the API's page/per_page/include_totals), as a table
 * that becomes one card a row at narrow widths (style.css: each cell under its column's name). Loading, the
 * API's error and the empty list are shown in place.
 */
import { useState, type ReactNode } from 'react';
import type { ManagementApi, Page } from '../api.js';
import { ErrorNotice, Pager, useLoad, type Loaded } from '../ui.js';

export interface Column<T> {
  label: string;
  cell: (row: T) => ReactNode;
}

export interface PagedList<T> {
  list: Loaded<Page<T>>;
  page: number;
  setPage: (page: number) => void;
  perPage: number;
}

/** One page of `path`'s `key` list; `deps` (e.g. a filter) start over at the first page when they change. */
export function usePagedList<T>(api: ManagementApi, path: string, key: string, perPage = 20, query: Record<string, string> = {}): PagedList<T> {
  const [page, setPage] = useState(0);
  const list = useLoad(() => api.page<T>(path, key, page, perPage, query), [path, page, JSON.stringify(query)]);
  return { list, page, setPage, perPage };
}

export function DataTable<T>({ caption, columns, paged, rowKey, empty }: { caption: string; columns: Column<T>[]; paged: PagedList<T>; rowKey: (row: T) => string; empty: ReactNode }) {
  const { list, page, setPage, perPage } = paged;
  const rows = list.data?.items ?? [];
  return (
    <>
      <ErrorNotice message={list.error} />
      {list.data && rows.length === 0 ? (
        <p className="muted">{empty}</p>
      ) : (
        <table>
          <caption className="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c.label} scope="col">
                  {c.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={rowKey(row)}>
                {columns.map((c) => (
                  <td key={c.label} data-label={c.label}>
                    {c.cell(row)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.loading && !list.data && <p className="loading">Loading…</p>}
      {list.data && <Pager page={page} perPage={perPage} total={list.data.total} onPage={setPage} />}
    </>
  );
}

/** The console's small shared pieces: loading data, errors in place, paging, URL lists (confirmation: components/ConfirmButton). */
import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { messageOf } from './api.js';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
  /** Shows what a write answered as the fresh read, so an edit made after the save is not overwritten by a late reload. */
  show: (data: T) => void;
}

/** Runs `load` when its dependencies change (and on reload); the newest answer wins. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ error: messageOf(error), loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  const show = useCallback((data: T) => setState({ data, loading: false }), []);
  return { data: state.data, error: state.error, loading: state.loading, reload, show };
}

export function ErrorNotice({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p className="notice problem" role="alert">
      {message}
    </p>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

export function Pager({ page, perPage, total, onPage }: { page: number; perPage: number; total: number; onPage: (page: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / perPage));
  if (pages <= 1) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={page === 0} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page + 1} of {pages}
      </span>
      <button type="button" disabled={page + 1 >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}

/** One URL a line: how callbacks, logout URLs and origins are edited. */
export function UrlList(props: { id: string; label: string; hint: string; value: string[]; onChange: (value: string[]) => void }) {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <textarea
        id={props.id}
        rows={3}
        value={props.value.join('\n')}
        aria-describedby={`${props.id}-hint`}
        onChange={(event) => props.onChange(event.target.value.split('\n'))}
      />
      <small id={`${props.id}-hint`}>{props.hint}</small>
    </div>
  );
}

/** The lines of a URL list as the API takes them: trimmed, no empty lines. */
export function urls(lines: string[]): string[] {
  return lines.map((line) => line.trim()).filter(Boolean);
}

/** A value shown once (a client secret), with a copy button. */
export function SecretOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="secret" role="status">
      <p>
        <strong>{label}</strong> — shown this once; copy it now.
      </p>
      <code data-testid="secret">{value}</code>
      <button
        type="button"
        onClick={async () => {
          await navigator.clipboard.writeText(value).catch(() => undefined);
          setCopied(true);
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

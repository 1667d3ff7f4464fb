/**
 * A form in a card: its heading, its fields, the API's error in place, a saved notice, and one submit button
 * that is disabled while the request runs. The repeated create/settings blocks of the pages, once.
 */
import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { messageOf } from '../api.js';
import { ErrorNotice, Notice } from '../ui.js';

export interface FormCardProps {
  title: string;
  submitLabel: string;
  /** Runs on submit; a thrown error (the API's ApiError) is shown in the card. Returns the notice to show, if any. */
  onSubmit: () => Promise<string | void>;
  children: ReactNode;
  /** Shown under the heading. */
  intro?: ReactNode;
  /** Other buttons beside the submit button. */
  actions?: ReactNode;
  testId?: string;
  /** Folded under its title until opened (a long form above a list). */
  folded?: boolean;
}

export function FormCard({ title, submitLabel, onSubmit, children, intro, actions, testId, folded }: FormCardProps) {
  const id = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    try {
      const notice = await onSubmit();
      if (notice) setDone(notice);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  const body = (
    <>
      {intro}
      {children}
      <ErrorNotice message={error} />
      {done && <Notice>{done}</Notice>}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {submitLabel}
        </button>
        {actions}
      </div>
    </>
  );
  if (folded) {
    return (
      <details className="card" data-testid={testId}>
        <summary id={id}>{title}</summary>
        <form onSubmit={submit} aria-labelledby={id}>
          {body}
        </form>
      </details>
    );
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby={id} data-testid={testId}>
      <h2 id={id}>{title}</h2>
      {body}
    </form>
  );
}

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
}

export function FormCard({ title, submitLabel, onSubmit, children, intro, actions, testId }: FormCardProps) {
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
  return (
    <form className="card" onSubmit={submit} aria-labelledby={id} data-testid={testId}>
      <h2 id={id}>{title}</h2>
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
    </form>
  );
}

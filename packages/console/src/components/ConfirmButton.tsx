/**
 * A button that asks before doing something that cannot be undone: Radix's AlertDialog (the WAI-ARIA alertdialog
 * pattern) does the accessibility work: a modal with a focus trap, the rest of the page inert to assistive
 * technology, Escape cancels, focus returns to the button after. Focus starts on Cancel, the safe choice. Kept
 * out of ui.tsx so the toolkit is in the pages' chunks, not the first load (the budget: README).
 * Radix Primitives is the console's toolkit: one small package a part, unstyled, and the smallest of the
 * candidates measured for what the console uses (README, "Admin console").
 */
import * as AlertDialog from '@radix-ui/react-alert-dialog';
import { useEffect, useState } from 'react';
import { messageOf, type ManagementApi } from '../api.js';

export function ConfirmButton(props: { label: string; question: string; confirmLabel: string; danger?: boolean; onConfirm: () => Promise<void> | void; accessibleName?: string }) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  // While it asks, the console behind (#root; the dialog is portalled outside it) is inert, not only aria-hidden
  // as Radix leaves it: nothing there can take focus or a click, as a modal promises (axe-core's aria-hidden-focus
  // rule flags the aria-hidden-only page). Removed before Radix hands focus back to the button.
  useEffect(() => {
    if (!open) return;
    const page = document.getElementById('root');
    page?.setAttribute('inert', '');
    return () => page?.removeAttribute('inert');
  }, [open]);
  return (
    <AlertDialog.Root open={open} onOpenChange={(next) => !busy && setOpen(next)}>
      <AlertDialog.Trigger className={props.danger ? 'danger' : ''} aria-label={props.accessibleName}>
        {props.label}
      </AlertDialog.Trigger>
      <AlertDialog.Portal>
        {/* A plain backdrop, not AlertDialog.Overlay: the Overlay locks scrolling with a <style> element it adds
            at run time, which the console's CSP (style-src 'self') refuses. The page behind may scroll; it stays
            inert (aria-hidden, no pointer events) and focus stays in the dialog. */}
        <div className="dialog-overlay" />
        {/* The question is the whole message and names the dialog: no separate description. */}
        <AlertDialog.Content className="dialog" aria-describedby={undefined}>
          <AlertDialog.Title className="dialog-question">{props.question}</AlertDialog.Title>
          <div className="actions">
            <AlertDialog.Cancel>Cancel</AlertDialog.Cancel>
            {/* A plain button, not AlertDialog.Action: the dialog stays open (and says it is busy) until the request ends. */}
            <button
              type="button"
              className={props.danger ? 'danger' : 'primary'}
              disabled={busy}
              onClick={async () => {
                setBusy(true);
                try {
                  await props.onConfirm();
                } finally {
                  setBusy(false);
                  setOpen(false);
                }
              }}
            >
              {props.confirmLabel}
            </button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}

/** A confirmed DELETE of `path`: `then` runs once it is gone; the API's refusal goes to `onError`, shown in place. */
export function DeleteButton(props: { api: ManagementApi; path: string; label: string; question: string; confirmLabel: string; then: () => void; onError: (message: string) => void }) {
  return (
    <ConfirmButton
      label={props.label}
      question={props.question}
      confirmLabel={props.confirmLabel}
      danger
      onConfirm={async () => {
        try {
          await props.api.request('DELETE', props.path);
          props.then();
        } catch (err) {
          props.onError(messageOf(err));
        }
      }}
    />
  );
}

/**
 * A setting that is on or off (a feature enabled, RBAC enforced): Radix's Switch, a button with role="switch"
 * and aria-checked that Space and Enter toggle, labelled by its <label>. A checkbox stays the control for picking
 * items of a list (which applications, which scopes); a switch says "this setting is on".
 */
import * as Switch from '@radix-ui/react-switch';
import { useId, type ReactNode } from 'react';

export function SwitchField({ label, checked, onValue, disabled, hint }: { label: ReactNode; checked: boolean; onValue: (checked: boolean) => void; disabled?: boolean; hint?: ReactNode }) {
  const id = useId();
  return (
    <div className="switch-field">
      <Switch.Root id={id} className="switch" checked={checked} disabled={disabled} onCheckedChange={onValue} aria-describedby={hint ? `${id}-hint` : undefined}>
        <Switch.Thumb className="switch-thumb" />
      </Switch.Root>
      <label htmlFor={id}>{label}</label>
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </div>
  );
}

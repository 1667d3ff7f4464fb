/** Labelled fields with an optional hint tied to them (aria-describedby), as every console form lays them out. */
import { useId, type InputHTMLAttributes, type ReactNode } from 'react';

interface Common {
  label: ReactNode;
  hint?: ReactNode;
  /** Takes a share of a .row. */
  grow?: boolean;
}

export function TextField({ label, hint, grow, value, onValue, ...input }: Common & { value: string; onValue: (value: string) => void } & Omit<InputHTMLAttributes<HTMLInputElement>, 'value' | 'onChange'>) {
  const id = useId();
  return (
    <div className={grow ? 'field grow' : 'field'}>
      <label htmlFor={id}>{label}</label>
      <input id={id} value={value} onChange={(e) => onValue(e.target.value)} aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </div>
  );
}

export function TextArea({ label, hint, grow, value, onValue, rows = 3, placeholder }: Common & { value: string; onValue: (value: string) => void; rows?: number; placeholder?: string }) {
  const id = useId();
  return (
    <div className={grow ? 'field grow' : 'field'}>
      <label htmlFor={id}>{label}</label>
      <textarea id={id} rows={rows} value={value} placeholder={placeholder} onChange={(e) => onValue(e.target.value)} aria-describedby={hint ? `${id}-hint` : undefined} />
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </div>
  );
}

export function SelectField({ label, hint, grow, value, onValue, choices, required }: Common & { value: string; onValue: (value: string) => void; choices: readonly (readonly [string, string])[]; required?: boolean }) {
  const id = useId();
  return (
    <div className={grow ? 'field grow' : 'field'}>
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} required={required} onChange={(e) => onValue(e.target.value)} aria-describedby={hint ? `${id}-hint` : undefined}>
        {choices.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </div>
  );
}

export function CheckField({ label, checked, onValue, disabled }: { label: ReactNode; checked: boolean; onValue: (checked: boolean) => void; disabled?: boolean }) {
  return (
    <label className="check">
      <input type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onValue(e.target.checked)} />
      {label}
    </label>
  );
}

/** Several values of a fixed set, as checkboxes in a fieldset. */
export function Choices<T extends string>({ legend, options, value, onValue }: { legend: string; options: readonly (readonly [T, string])[]; value: readonly T[]; onValue: (value: T[]) => void }) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      <div className="choices">
        {options.map(([option, text]) => (
          <CheckField
            key={option}
            label={text}
            checked={value.includes(option)}
            onValue={(on) => onValue(on ? [...value.filter((v) => v !== option), option] : value.filter((v) => v !== option))}
          />
        ))}
      </div>
    </fieldset>
  );
}

/** "a, b\nc" → ["a", "b", "c"]: lists typed one a line (or comma-separated). */
export function linesOf(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter(Boolean);
}

/**
 * The console's sections. Wide: every link in a row. Narrow (phones, 390 px): the links fold behind a "Menu"
 * button, a disclosure (Radix's Collapsible: the button's aria-expanded and aria-controls kept right), so the
 * page starts with its content rather than three lines of links; following a link folds it again.
 */
import * as Collapsible from '@radix-ui/react-collapsible';
import { useEffect, useState, useSyncExternalStore } from 'react';
import { href } from '../router.js';

export interface Section {
  path: string;
  label: string;
}

/** Where the row of links no longer fits on one line (style.css uses the same width). */
const NARROW = '(max-width: 700px)';

function useNarrow(): boolean {
  return useSyncExternalStore(
    (changed) => {
      const query = window.matchMedia(NARROW);
      query.addEventListener('change', changed);
      return () => query.removeEventListener('change', changed);
    },
    () => window.matchMedia(NARROW).matches,
  );
}

export function SectionsNav({ sections, current }: { sections: Section[]; current: (path: string) => boolean }) {
  const narrow = useNarrow();
  const [open, setOpen] = useState(false);
  const here = sections.find((s) => current(s.path));
  // A new page (a link followed, or back/forward): fold the menu.
  useEffect(() => setOpen(false), [here?.path]);
  const links = (
    <ul>
      {sections.map((s) => (
        <li key={s.path}>
          <a href={href(...(s.path ? [s.path] : []))} aria-current={current(s.path) ? 'page' : undefined} onClick={() => setOpen(false)}>
            {s.label}
          </a>
        </li>
      ))}
    </ul>
  );
  if (!narrow) return <nav aria-label="Sections">{links}</nav>;
  return (
    <Collapsible.Root open={open} onOpenChange={setOpen} asChild>
      <nav aria-label="Sections" className="folded">
        <Collapsible.Trigger className="menu-button">
          Menu
          {here && <span className="muted"> · {here.label}</span>}
        </Collapsible.Trigger>
        <Collapsible.Content>{links}</Collapsible.Content>
      </nav>
    </Collapsible.Root>
  );
}

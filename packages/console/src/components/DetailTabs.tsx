/**
 * A detail page's parts as tabs (one application's settings, connections, credentials; one user's profile,
 * roles, sessions): Radix's Tabs, the WAI-ARIA tabs pattern (arrow keys move between tabs, Tab goes into the
 * panel, each panel labelled by its tab). Every panel stays mounted, only the chosen one shown (style.css hides
 * the others), so what was typed in one survives a look at another.
 */
import * as Tabs from '@radix-ui/react-tabs';
import { useState, type ReactNode } from 'react';

export interface DetailTab {
  id: string;
  label: string;
  content: ReactNode;
}

/** `tabs`: false for a part this record does not have (a machine-to-machine application has no connections). */
export function DetailTabs({ label, tabs }: { label: string; tabs: (DetailTab | false)[] }) {
  const shown = tabs.filter((tab): tab is DetailTab => tab !== false);
  const [chosen, setChosen] = useState(shown[0]?.id ?? '');
  return (
    <Tabs.Root className="tabs" value={shown.some((t) => t.id === chosen) ? chosen : shown[0]?.id} onValueChange={setChosen}>
      <Tabs.List className="tab-list" aria-label={label}>
        {shown.map((tab) => (
          <Tabs.Trigger key={tab.id} value={tab.id} className="tab">
            {tab.label}
          </Tabs.Trigger>
        ))}
      </Tabs.List>
      {shown.map((tab) => (
        <Tabs.Content key={tab.id} value={tab.id} forceMount className="tab-panel">
          {tab.content}
        </Tabs.Content>
      ))}
    </Tabs.Root>
  );
}

/**
 * Tenant settings (/tenants/settings): the name people see, where they get support, how long login sessions
 * last, the default audience and directory; and MFA's "remember this browser" (/guardian/settings).
 */
import { useEffect, useState } from 'react';
import type { ManagementApi } from '../api.js';
import { SelectField, TextField } from '../components/fields.js';
import { SwitchField } from '../components/SwitchField.js';
import { FormCard } from '../components/FormCard.js';
import { ErrorNotice, useLoad } from '../ui.js';

interface Settings {
  friendly_name: string;
  support_email?: string;
  support_url?: string;
  session_lifetime: number;
  idle_session_lifetime: number;
  default_audience?: string;
  default_directory?: string;
}

interface RememberBrowser {
  display_remember_me_checkbox: boolean;
  remember_me_default_value: boolean;
  mfa_session_inactivity_timeout: number;
  mfa_session_overall_timeout: number;
}

const DAY = 86_400;

function GeneralSettings({ api }: { api: ManagementApi }) {
  const loaded = useLoad(() => api.get<Settings>('/tenants/settings'), []);
  const apis = useLoad(() => api.page<{ identifier: string; name: string }>('/resource-servers', 'resource_servers', 0, 100), []);
  const databases = useLoad(() => api.page<{ name: string }>('/connections', 'connections', 0, 100, { strategy: 'auth0' }), []);
  const [draft, setDraft] = useState<Settings>();
  useEffect(() => setDraft(loaded.data), [loaded.data]);
  if (!draft) return loaded.error ? <ErrorNotice message={loaded.error} /> : <p className="loading">Loading…</p>;
  const set = (change: Partial<Settings>) => setDraft({ ...draft, ...change });
  return (
    <FormCard
      title="General"
      submitLabel="Save settings"
      testId="tenant-settings"
      onSubmit={async () => {
        // An empty string clears support_*, default_audience and default_directory (the API's rule).
        await api.request('PATCH', '/tenants/settings', {
          friendly_name: draft.friendly_name.trim(),
          support_email: draft.support_email?.trim() ?? '',
          support_url: draft.support_url?.trim() ?? '',
          session_lifetime: draft.session_lifetime,
          idle_session_lifetime: draft.idle_session_lifetime,
          default_audience: draft.default_audience ?? '',
          default_directory: draft.default_directory ?? '',
        });
        loaded.reload();
        return 'Saved.';
      }}
    >
      <ErrorNotice message={apis.error ?? databases.error} />
      <div className="row by-label">
        <TextField grow label="Friendly name" required maxLength={255} hint="The name the hosted pages and emails show." value={draft.friendly_name} onValue={(friendly_name) => set({ friendly_name })} />
        <TextField grow label="Support email" type="email" value={draft.support_email ?? ''} onValue={(support_email) => set({ support_email })} />
        <TextField grow label="Support URL" type="url" pattern="https?://.*" value={draft.support_url ?? ''} onValue={(support_url) => set({ support_url })} />
      </div>
      <div className="row by-label">
        <TextField
          grow
          label="Session lifetime (hours)"
          type="number"
          min={1}
          max={8760}
          required
          hint="A login session ends this long after it began."
          value={String(draft.session_lifetime)}
          onValue={(v) => set({ session_lifetime: Number(v) })}
        />
        <TextField
          grow
          label="Idle session lifetime (hours)"
          type="number"
          min={1}
          max={8760}
          required
          hint="…or after this long without use."
          value={String(draft.idle_session_lifetime)}
          onValue={(v) => set({ idle_session_lifetime: Number(v) })}
        />
      </div>
      <div className="row by-label">
        <SelectField
          grow
          label="Default audience"
          hint="The API a token is for when an application asks for none."
          value={draft.default_audience ?? ''}
          onValue={(default_audience) => set({ default_audience })}
          choices={[['', 'None'], ...(apis.data?.items ?? []).map((rs) => [rs.identifier, `${rs.name} (${rs.identifier})`] as const)]}
        />
        <SelectField
          grow
          label="Default directory"
          hint="The database connection used by the password grant and sign-ups when none is named."
          value={draft.default_directory ?? ''}
          onValue={(default_directory) => set({ default_directory })}
          choices={[['', 'None'], ...(databases.data?.items ?? []).map((c) => [c.name, c.name] as const)]}
        />
      </div>
    </FormCard>
  );
}

function RememberBrowserSettings({ api }: { api: ManagementApi }) {
  const loaded = useLoad(() => api.get<RememberBrowser>('/guardian/settings'), []);
  const [draft, setDraft] = useState<RememberBrowser>();
  useEffect(() => setDraft(loaded.data), [loaded.data]);
  if (!draft) return loaded.error ? <ErrorNotice message={loaded.error} /> : <p className="loading">Loading…</p>;
  const set = (change: Partial<RememberBrowser>) => setDraft({ ...draft, ...change });
  const days = (seconds: number) => String(Math.round((seconds / DAY) * 100) / 100);
  return (
    <FormCard
      title="Multi-factor authentication: remember this browser"
      submitLabel="Save MFA settings"
      testId="remember-browser"
      intro={<p>After a second factor, a person may skip it on this browser for a while.</p>}
      onSubmit={async () => {
        await api.request('PUT', '/guardian/settings', draft);
        loaded.reload();
        return 'Saved.';
      }}
    >
      <div className="check-group">
        <SwitchField label="Offer “Remember this browser” on the MFA pages" checked={draft.display_remember_me_checkbox} onValue={(v) => set({ display_remember_me_checkbox: v })} />
        <SwitchField label="Ticked by default" checked={draft.remember_me_default_value} disabled={!draft.display_remember_me_checkbox} onValue={(v) => set({ remember_me_default_value: v })} />
      </div>
      <div className="row by-label">
        <TextField
          grow
          label="Ask again after inactivity (days)"
          type="number"
          min={1 / 24}
          max={30}
          step="any"
          required
          value={days(draft.mfa_session_inactivity_timeout)}
          onValue={(v) => set({ mfa_session_inactivity_timeout: Math.round(Number(v) * DAY) })}
        />
        <TextField
          grow
          label="Ask again in any case after (days)"
          type="number"
          min={1 / 24}
          max={90}
          step="any"
          required
          value={days(draft.mfa_session_overall_timeout)}
          onValue={(v) => set({ mfa_session_overall_timeout: Math.round(Number(v) * DAY) })}
        />
      </div>
    </FormCard>
  );
}

export function TenantSettings({ api }: { api: ManagementApi }) {
  return (
    <>
      <h1>Tenant settings</h1>
      <p className="lead">This tenant’s name, support contacts, sessions and defaults.</p>
      <GeneralSettings api={api} />
      <RememberBrowserSettings api={api} />
    </>
  );
}

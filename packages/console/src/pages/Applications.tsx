/** Applications: the list (paged), creating one by type, and the secret of a new confidential one shown once. */
import { useState } from 'react';
import type { ManagementApi } from '../api.js';
import { DataTable, usePagedList } from '../components/DataTable.js';
import { SelectField, TextField } from '../components/fields.js';
import { FormCard } from '../components/FormCard.js';
import { go, href } from '../router.js';

export interface Application {
  client_id: string;
  name: string;
  app_type?: string;
  description?: string;
  client_secret?: string;
  callbacks?: string[];
  allowed_logout_urls?: string[];
  web_origins?: string[];
  allowed_origins?: string[];
  grant_types?: string[];
  token_endpoint_auth_method?: string;
  is_first_party?: boolean;
}

export const APP_TYPES: Record<string, { label: string; body: Record<string, unknown> }> = {
  spa: {
    label: 'Single-page application',
    body: { app_type: 'spa', token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] },
  },
  regular_web: {
    label: 'Regular web application',
    body: { app_type: 'regular_web', token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code', 'refresh_token'] },
  },
  native: { label: 'Native application', body: { app_type: 'native', token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] } },
  non_interactive: {
    label: 'Machine to machine',
    body: { app_type: 'non_interactive', token_endpoint_auth_method: 'client_secret_post', grant_types: ['client_credentials'] },
  },
};

export interface Connection {
  id: string;
  name: string;
  strategy: string;
  enabled_clients?: string[];
}

/** The tenant's connections (their first hundred: a tenant has a handful), with the clients each is enabled for. */
export async function listConnections(api: ManagementApi): Promise<Connection[]> {
  return (await api.page<Connection>('/connections', 'connections', 0, 100)).items;
}

/** Where a newly made application's secret waits to be shown once, on its page; never stored anywhere. */
export const createdSecrets = new Map<string, string>();

function CreateApplication({ api }: { api: ManagementApi }) {
  const [name, setName] = useState('');
  const [type, setType] = useState('spa');
  return (
    <FormCard
      title="Create an application"
      submitLabel="Create"
      intro={<p className="muted small">Applications people log in to start with the tenant's database connections enabled.</p>}
      onSubmit={async () => {
        const created = await api.request<Application>('POST', '/clients', { name: name.trim(), ...APP_TYPES[type]!.body });
        if (created.client_secret) createdSecrets.set(created.client_id, created.client_secret);
        // An application people log in to needs a connection: the database ones are enabled for it, as a
        // dashboard does, so a new app can log in at once (its page can turn them off).
        if (type !== 'non_interactive') {
          for (const connection of (await listConnections(api)).filter((c) => c.strategy === 'auth0')) {
            await api.request('PATCH', `/connections/${encodeURIComponent(connection.id)}/clients`, [{ client_id: created.client_id, status: true }]);
          }
        }
        go('applications', created.client_id);
      }}
    >
      <div className="row by-label">
        <TextField grow label="Name" required maxLength={128} value={name} onValue={setName} />
        <SelectField grow label="Type" value={type} onValue={setType} choices={Object.entries(APP_TYPES).map(([value, { label }]) => [value, label] as const)} />
      </div>
    </FormCard>
  );
}

export function Applications({ api }: { api: ManagementApi }) {
  const paged = usePagedList<Application>(api, '/clients', 'clients', 20, { fields: 'client_id,name,app_type,description', include_fields: 'true' });
  return (
    <>
      <h1>Applications</h1>
      <CreateApplication api={api} />
      <DataTable
        caption="Applications of this tenant"
        paged={paged}
        rowKey={(app) => app.client_id}
        empty="No applications yet."
        columns={[
          { label: 'Name', cell: (app) => <a href={href('applications', app.client_id)}>{app.name}</a> },
          { label: 'Type', cell: (app) => APP_TYPES[app.app_type ?? '']?.label ?? app.app_type ?? '—' },
          { label: 'Client ID', cell: (app) => <code>{app.client_id}</code> },
        ]}
      />
    </>
  );
}

/** Applications: the list (paged), creating one by type, and the secret of a new confidential one shown once. */
import { useState, type FormEvent } from 'react';
import { messageOf, type ManagementApi } from '../api.js';
import { go, href } from '../router.js';
import { ErrorNotice, Pager, useLoad } from '../ui.js';

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

const PER_PAGE = 20;

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
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
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
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="create-app">
      <h2 id="create-app">Create an application</h2>
      <div className="row">
        <div className="field">
          <label htmlFor="app-name">Name</label>
          <input id="app-name" required maxLength={128} value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="app-type">Type</label>
          <select id="app-type" value={type} onChange={(e) => setType(e.target.value)}>
            {Object.entries(APP_TYPES).map(([value, { label }]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" className="primary" disabled={busy}>
          Create
        </button>
      </div>
      <p className="muted small">Applications people log in to start with the tenant's database connections enabled.</p>
      <ErrorNotice message={error} />
    </form>
  );
}

export function Applications({ api }: { api: ManagementApi }) {
  const [page, setPage] = useState(0);
  const list = useLoad(() => api.page<Application>('/clients', 'clients', page, PER_PAGE, { fields: 'client_id,name,app_type,description', include_fields: 'true' }), [page]);
  return (
    <>
      <h1>Applications</h1>
      <CreateApplication api={api} />
      <ErrorNotice message={list.error} />
      <table>
        <caption className="visually-hidden">Applications of this tenant</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Client ID</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.items.map((app) => (
            <tr key={app.client_id}>
              <td data-label="Name">
                <a href={href('applications', app.client_id)}>{app.name}</a>
              </td>
              <td data-label="Type">{APP_TYPES[app.app_type ?? '']?.label ?? app.app_type ?? '—'}</td>
              <td data-label="Client ID">
                <code>{app.client_id}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.loading && !list.data && <p className="loading">Loading…</p>}
      {list.data && <Pager page={page} perPage={PER_PAGE} total={list.data.total} onPage={setPage} />}
    </>
  );
}

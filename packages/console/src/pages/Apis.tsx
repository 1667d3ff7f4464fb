/**
 * APIs (resource servers): the list (paged), creating one with its identifier and scopes, and one API's page:
 * scopes, RBAC settings, and which machine-to-machine applications may get tokens for it (client grants).
 */
import { useEffect, useState, type FormEvent } from 'react';
import { messageOf, type ManagementApi } from '../api.js';
import { go, href } from '../router.js';
import { DeleteButton } from '../components/ConfirmButton.js';
import { SwitchField } from '../components/SwitchField.js';
import { ErrorNotice, Notice, Pager, useLoad } from '../ui.js';
import type { Application } from './Applications.js';

export interface Scope {
  value: string;
  description?: string;
}

export interface ResourceServer {
  id: string;
  name: string;
  identifier: string;
  is_system: boolean;
  scopes: Scope[];
  enforce_policies?: boolean;
  token_dialect?: string;
  token_lifetime?: number;
  allow_offline_access?: boolean;
}

export interface ClientGrant {
  id: string;
  client_id: string;
  audience: string;
  scope: string[];
}

const PER_PAGE = 20;

/** "read:orders Read orders" lines → scopes; the first word is the value, the rest its description. */
export function scopesOf(text: string): Scope[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [value = '', ...rest] = line.split(/\s+/);
      const description = rest.join(' ');
      return description ? { value, description } : { value };
    });
}

function CreateApi({ api }: { api: ManagementApi }) {
  const [name, setName] = useState('');
  const [identifier, setIdentifier] = useState('');
  const [scopes, setScopes] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api.request<ResourceServer>('POST', '/resource-servers', { name: name.trim(), identifier: identifier.trim(), scopes: scopesOf(scopes) });
      go('apis', created.id);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="create-api">
      <h2 id="create-api">Create an API</h2>
      <div className="row by-label">
        <div className="field grow">
          <label htmlFor="api-name">Name</label>
          <input id="api-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <div className="field grow">
          <label htmlFor="api-identifier">Identifier</label>
          <input
            id="api-identifier"
            required
            maxLength={600}
            placeholder="https://orders.example.com/api"
            aria-describedby="api-identifier-hint"
            value={identifier}
            onChange={(e) => setIdentifier(e.target.value)}
          />
          <small id="api-identifier-hint">The audience applications ask tokens for. It cannot be changed later.</small>
        </div>
      </div>
      <div className="field">
        <label htmlFor="api-scopes">Scopes</label>
        <textarea id="api-scopes" rows={3} placeholder="read:orders Read orders" aria-describedby="api-scopes-hint" value={scopes} onChange={(e) => setScopes(e.target.value)} />
        <small id="api-scopes-hint">One a line: the scope, then an optional description.</small>
      </div>
      <ErrorNotice message={error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          Create API
        </button>
      </div>
    </form>
  );
}

export function Apis({ api }: { api: ManagementApi }) {
  const [page, setPage] = useState(0);
  const list = useLoad(() => api.page<ResourceServer>('/resource-servers', 'resource_servers', page, PER_PAGE), [page]);
  return (
    <>
      <h1>APIs</h1>
      <p className="lead">The APIs your applications get access tokens for: each is an audience with its scopes.</p>
      <CreateApi api={api} />
      <ErrorNotice message={list.error} />
      <table>
        <caption className="visually-hidden">APIs of this tenant</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Identifier</th>
            <th scope="col">Scopes</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.items.map((rs) => (
            <tr key={rs.id}>
              <td data-label="Name">
                <a href={href('apis', rs.id)}>{rs.name}</a>
                {rs.is_system && (
                  <>
                    {' '}
                    <span className="badge">System</span>
                  </>
                )}
              </td>
              <td data-label="Identifier">
                <code>{rs.identifier}</code>
              </td>
              <td data-label="Scopes">{rs.scopes.length}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.loading && !list.data && <p className="loading">Loading…</p>}
      {list.data && <Pager page={page} perPage={PER_PAGE} total={list.data.total} onPage={setPage} />}
    </>
  );
}

/** Which machine-to-machine applications may get tokens for this API, and with which of its scopes. */
function MachineAccess({ api, rs }: { api: ManagementApi; rs: ResourceServer }) {
  const apps = useLoad(
    () => api.page<Application>('/clients', 'clients', 0, 100, { app_type: 'non_interactive', fields: 'client_id,name,app_type', include_fields: 'true' }),
    [],
  );
  const grants = useLoad(() => api.page<ClientGrant>('/client-grants', 'client_grants', 0, 100, { audience: rs.identifier }), [rs.identifier]);
  const [error, setError] = useState<string>();
  const byClient = new Map((grants.data?.items ?? []).map((g) => [g.client_id, g]));
  const m2m = (apps.data?.items ?? []).filter((a) => a.app_type === 'non_interactive');
  const toggle = async (app: Application) => {
    setError(undefined);
    try {
      const grant = byClient.get(app.client_id);
      if (grant) await api.request('DELETE', `/client-grants/${encodeURIComponent(grant.id)}`);
      else await api.request('POST', '/client-grants', { client_id: app.client_id, audience: rs.identifier, scope: rs.scopes.map((s) => s.value) });
      grants.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <section className="card" aria-labelledby="m2m">
      <h2 id="m2m">Machine-to-machine access</h2>
      <p>Authorized applications get tokens for this API with the client credentials grant, holding all its scopes.</p>
      <ErrorNotice message={apps.error ?? grants.error ?? error} />
      {apps.data && m2m.length === 0 && (
        <p>
          No machine-to-machine applications yet. <a href={href('applications')}>Create one</a>.
        </p>
      )}
      <ul className="plain">
        {m2m.map((app) => (
          <li key={app.client_id}>
            <label className="check">
              <input type="checkbox" checked={byClient.has(app.client_id)} disabled={!grants.data} onChange={() => void toggle(app)} />
              {app.name}
            </label>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function ApiDetail({ api, id }: { api: ManagementApi; id: string }) {
  const path = `/resource-servers/${encodeURIComponent(id)}`;
  const loaded = useLoad(() => api.get<ResourceServer>(path), [id]);
  const [scopes, setScopes] = useState('');
  const [rbac, setRbac] = useState(false);
  const [permissionsInToken, setPermissionsInToken] = useState(false);
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    const rs = loaded.data;
    if (!rs) return;
    setScopes(rs.scopes.map((s) => (s.description ? `${s.value} ${s.description}` : s.value)).join('\n'));
    setRbac(rs.enforce_policies ?? false);
    setPermissionsInToken((rs.token_dialect ?? '').endsWith('_authz'));
  }, [loaded.data]);
  const rs = loaded.data;
  if (loaded.error) return <ErrorNotice message={loaded.error} />;
  if (!rs) return <p className="loading">Loading…</p>;

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    setSaved(false);
    const profile = (rs.token_dialect ?? 'access_token').startsWith('rfc9068') ? 'rfc9068_profile' : 'access_token';
    try {
      await api.request('PATCH', path, {
        scopes: scopesOf(scopes),
        enforce_policies: rbac,
        token_dialect: rbac && permissionsInToken ? `${profile}_authz` : profile,
      });
      setSaved(true);
      loaded.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <>
      <p className="crumbs">
        <a href={href('apis')}>APIs</a> /
      </p>
      <h1>{rs.name}</h1>
      <dl className="facts">
        <div>
          <dt>Identifier (audience)</dt>
          <dd>
            <code data-testid="api-identifier">{rs.identifier}</code>
          </dd>
        </div>
        <div>
          <dt>Token lifetime</dt>
          <dd>{rs.token_lifetime ? `${rs.token_lifetime} s` : '—'}</dd>
        </div>
        <div>
          <dt>Scopes</dt>
          <dd>{rs.scopes.map((s) => s.value).join(', ') || '—'}</dd>
        </div>
      </dl>
      {rs.is_system ? (
        <Notice>This is the Management API itself: its scopes and settings are fixed.</Notice>
      ) : (
        <>
          <form className="card" onSubmit={save} aria-labelledby="api-settings">
            <h2 id="api-settings">Scopes and access</h2>
            <div className="field">
              <label htmlFor="scopes">Scopes</label>
              <textarea id="scopes" rows={4} aria-describedby="scopes-hint" value={scopes} onChange={(e) => setScopes(e.target.value)} />
              <small id="scopes-hint">One a line: the scope, then an optional description.</small>
            </div>
            <div className="check-group">
              <SwitchField label="Enable RBAC: a user's token holds only the scopes their roles grant" checked={rbac} onValue={setRbac} />
              <SwitchField label={<>Add the permissions to the access token (a <code>permissions</code> claim)</>} checked={permissionsInToken} disabled={!rbac} onValue={setPermissionsInToken} />
            </div>
            <ErrorNotice message={error} />
            {saved && <Notice>Saved.</Notice>}
            <div className="actions">
              <button type="submit" className="primary">
                Save changes
              </button>
            </div>
          </form>
          <MachineAccess api={api} rs={rs} />
          <section className="card" aria-labelledby="danger">
            <h2 id="danger">Delete</h2>
            <DeleteButton api={api} path={path} label="Delete API" question={`Delete ${rs.name}? Applications can no longer get tokens for ${rs.identifier}.`} confirmLabel="Delete" then={() => go('apis')} onError={setError} />
          </section>
        </>
      )}
    </>
  );
}

/**
 * APIs (resource servers): the list (paged), creating one with its identifier and scopes, and one API's page:
 * scopes, RBAC settings, and which machine-to-machine applications may get tokens for it (client grants).
 */
import { useEffect, useState } from 'react';
import { messageOf, type ManagementApi } from '../api.js';
import { go, href } from '../router.js';
import { DeleteButton } from '../components/ConfirmButton.js';
import { DataTable, usePagedList } from '../components/DataTable.js';
import { TextArea, TextField } from '../components/fields.js';
import { FormCard } from '../components/FormCard.js';
import { SwitchField } from '../components/SwitchField.js';
import { ErrorNotice, Notice, useLoad } from '../ui.js';
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
  return (
    <FormCard
      title="Create an API"
      submitLabel="Create API"
      onSubmit={async () => {
        const created = await api.request<ResourceServer>('POST', '/resource-servers', { name: name.trim(), identifier: identifier.trim(), scopes: scopesOf(scopes) });
        go('apis', created.id);
      }}
    >
      <div className="row by-label">
        <TextField grow label="Name" required maxLength={200} value={name} onValue={setName} />
        <TextField
          grow
          label="Identifier"
          hint="The audience applications ask tokens for. It cannot be changed later."
          required
          maxLength={600}
          placeholder="https://orders.example.com/api"
          value={identifier}
          onValue={setIdentifier}
        />
      </div>
      <TextArea label="Scopes" hint="One a line: the scope, then an optional description." placeholder="read:orders Read orders" value={scopes} onValue={setScopes} />
    </FormCard>
  );
}

export function Apis({ api }: { api: ManagementApi }) {
  const paged = usePagedList<ResourceServer>(api, '/resource-servers', 'resource_servers');
  return (
    <>
      <h1>APIs</h1>
      <p className="lead">The APIs your applications get access tokens for: each is an audience with its scopes.</p>
      <CreateApi api={api} />
      <DataTable
        caption="APIs of this tenant"
        paged={paged}
        rowKey={(rs) => rs.id}
        empty="No APIs yet."
        columns={[
          {
            label: 'Name',
            cell: (rs) => (
              <>
                <a href={href('apis', rs.id)}>{rs.name}</a>
                {rs.is_system && (
                  <>
                    {' '}
                    <span className="badge">System</span>
                  </>
                )}
              </>
            ),
          },
          { label: 'Identifier', cell: (rs) => <code>{rs.identifier}</code> },
          { label: 'Scopes', cell: (rs) => rs.scopes.length },
        ]}
      />
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

  const save = async () => {
    const profile = (rs.token_dialect ?? 'access_token').startsWith('rfc9068') ? 'rfc9068_profile' : 'access_token';
    loaded.show(await api.request<ResourceServer>('PATCH', path, {
      scopes: scopesOf(scopes),
      enforce_policies: rbac,
      token_dialect: rbac && permissionsInToken ? `${profile}_authz` : profile,
    }));
    return 'Saved.';
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
          <FormCard title="Scopes and access" submitLabel="Save changes" onSubmit={save}>
            <TextArea label="Scopes" hint="One a line: the scope, then an optional description." rows={4} value={scopes} onValue={setScopes} />
            <div className="check-group">
              <SwitchField label="Enable RBAC: a user's token holds only the scopes their roles grant" checked={rbac} onValue={setRbac} />
              <SwitchField label={<>Add the permissions to the access token (a <code>permissions</code> claim)</>} checked={permissionsInToken} disabled={!rbac} onValue={setPermissionsInToken} />
            </div>
          </FormCard>
          <MachineAccess api={api} rs={rs} />
          <section className="card" aria-labelledby="danger">
            <h2 id="danger">Delete</h2>
            <ErrorNotice message={error} />
            <DeleteButton api={api} path={path} label="Delete API" question={`Delete ${rs.name}? Applications can no longer get tokens for ${rs.identifier}.`} confirmLabel="Delete" then={() => go('apis')} onError={setError} />
          </section>
        </>
      )}
    </>
  );
}

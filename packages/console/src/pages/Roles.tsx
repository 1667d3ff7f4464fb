/**
 * Roles (RBAC): the list (paged), creating one, and one role's page: its name and description, the permissions
 * it grants (scopes of the tenant's APIs), the users who hold it (assigned by email), and deleting it.
 */
import { useEffect, useState } from 'react';
import { ApiError, messageOf, type ManagementApi } from '../api.js';
import { DataTable, usePagedList } from '../components/DataTable.js';
import { SelectField, TextField } from '../components/fields.js';
import { FormCard } from '../components/FormCard.js';
import { go, href } from '../router.js';
import { ConfirmButton, DeleteButton } from '../components/ConfirmButton.js';
import { ErrorNotice, useLoad } from '../ui.js';

export interface Role {
  id: string;
  name: string;
  description: string;
}

interface Permission {
  permission_name: string;
  description: string;
  resource_server_identifier: string;
  resource_server_name: string;
}

interface ResourceServer {
  id: string;
  name: string;
  identifier: string;
  is_system?: boolean;
  scopes: { value: string; description?: string }[];
}

interface RoleUser {
  user_id: string;
  email?: string;
  name?: string;
}

/** The one user with this email (GET /users-by-email), or an error saying there is none. */
export async function findUserByEmail(api: ManagementApi, email: string): Promise<{ user_id: string; email?: string }> {
  const users = await api.get<{ user_id: string; email?: string }[]>(`/users-by-email?${new URLSearchParams({ email: email.trim() })}`);
  const [user] = users;
  if (!user) throw new ApiError(404, `No user has the email ${email.trim()}.`);
  return user;
}

export function Roles({ api }: { api: ManagementApi }) {
  const paged = usePagedList<Role>(api, '/roles', 'roles');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  return (
    <>
      <h1>Roles</h1>
      <p className="lead">Sets of permissions to your APIs, given to users: with RBAC on an API, a token holds only what its user’s roles grant.</p>
      <FormCard
        title="Create a role"
        submitLabel="Create role"
        onSubmit={async () => {
          const created = await api.request<Role>('POST', '/roles', { name: name.trim(), description: description.trim() });
          go('roles', created.id);
        }}
      >
        <div className="row by-label">
          <TextField grow label="Name" required maxLength={50} value={name} onValue={setName} />
          <TextField grow label="Description" maxLength={255} value={description} onValue={setDescription} />
        </div>
      </FormCard>
      <DataTable
        caption="Roles of this tenant"
        paged={paged}
        rowKey={(r) => r.id}
        empty="No roles yet."
        columns={[
          { label: 'Name', cell: (r) => <a href={href('roles', r.id)}>{r.name}</a> },
          { label: 'Description', cell: (r) => r.description || '—' },
        ]}
      />
    </>
  );
}

function Permissions({ api, base }: { api: ManagementApi; base: string }) {
  const paged = usePagedList<Permission>(api, `${base}/permissions`, 'permissions');
  const apis = useLoad(() => api.page<ResourceServer>('/resource-servers', 'resource_servers', 0, 100), []);
  const [audience, setAudience] = useState('');
  const [scope, setScope] = useState('');
  const [error, setError] = useState<string>();
  const chosen = apis.data?.items.find((rs) => rs.identifier === audience);
  const permissionsBody = (p: { resource_server_identifier: string; permission_name: string }) => ({
    permissions: [{ resource_server_identifier: p.resource_server_identifier, permission_name: p.permission_name }],
  });
  return (
    <section className="card" aria-labelledby="role-permissions">
      <h2 id="role-permissions">Permissions</h2>
      <ErrorNotice message={error ?? apis.error} />
      <DataTable
        caption="Permissions this role grants"
        paged={paged}
        rowKey={(p) => `${p.resource_server_identifier} ${p.permission_name}`}
        empty="This role grants no permission yet."
        columns={[
          { label: 'Permission', cell: (p) => <code>{p.permission_name}</code> },
          { label: 'API', cell: (p) => p.resource_server_name },
          { label: 'Description', cell: (p) => p.description || '—' },
          {
            label: 'Actions',
            cell: (p) => (
              <ConfirmButton
                label="Remove"
                accessibleName={`Remove the permission ${p.permission_name}`}
                question={`Remove ${p.permission_name} (${p.resource_server_name}) from this role? Its users lose it at their next token.`}
                confirmLabel="Remove permission"
                danger
                onConfirm={async () => {
                  setError(undefined);
                  try {
                    await api.request('DELETE', `${base}/permissions`, permissionsBody(p));
                    paged.list.reload();
                  } catch (err) {
                    setError(messageOf(err));
                  }
                }}
              />
            ),
          },
        ]}
      />
      <FormCard
        title="Add a permission"
        submitLabel="Add permission"
        onSubmit={async () => {
          await api.request('POST', `${base}/permissions`, permissionsBody({ resource_server_identifier: audience, permission_name: scope }));
          setScope('');
          paged.list.reload();
        }}
      >
        <div className="row by-label">
          <SelectField
            grow
            label="API"
            required
            value={audience}
            onValue={(v) => {
              setAudience(v);
              setScope('');
            }}
            choices={[['', 'Choose an API…'], ...(apis.data?.items ?? []).map((rs) => [rs.identifier, rs.name] as const)]}
          />
          <SelectField
            grow
            label="Permission"
            required
            value={scope}
            onValue={setScope}
            choices={[['', chosen ? 'Choose a permission…' : 'Choose an API first'], ...(chosen?.scopes ?? []).map((s) => [s.value, s.description ? `${s.value} — ${s.description}` : s.value] as const)]}
          />
        </div>
      </FormCard>
    </section>
  );
}

function Users({ api, id, base }: { api: ManagementApi; id: string; base: string }) {
  const paged = usePagedList<RoleUser>(api, `${base}/users`, 'users');
  const [email, setEmail] = useState('');
  const [error, setError] = useState<string>();
  return (
    <section className="card" aria-labelledby="role-users">
      <h2 id="role-users">Users</h2>
      <ErrorNotice message={error} />
      <DataTable
        caption="Users who hold this role"
        paged={paged}
        rowKey={(u) => u.user_id}
        empty="Nobody holds this role yet."
        columns={[
          { label: 'User', cell: (u) => <a href={href('users', u.user_id)}>{u.email ?? u.name ?? u.user_id}</a> },
          {
            label: 'Actions',
            cell: (u) => (
              <ConfirmButton
                label="Unassign"
                accessibleName={`Unassign the role from ${u.email ?? u.user_id}`}
                question={`Take this role away from ${u.email ?? u.user_id}?`}
                confirmLabel="Unassign"
                danger
                onConfirm={async () => {
                  setError(undefined);
                  try {
                    await api.request('DELETE', `/users/${encodeURIComponent(u.user_id)}/roles`, { roles: [id] });
                    paged.list.reload();
                  } catch (err) {
                    setError(messageOf(err));
                  }
                }}
              />
            ),
          },
        ]}
      />
      <FormCard
        title="Assign to a user"
        submitLabel="Assign role"
        onSubmit={async () => {
          const user = await findUserByEmail(api, email);
          await api.request('POST', `${base}/users`, { users: [user.user_id] });
          setEmail('');
          paged.list.reload();
          return `Assigned to ${user.email ?? email}.`;
        }}
      >
        <TextField label="User’s email" type="email" required value={email} onValue={setEmail} />
      </FormCard>
    </section>
  );
}

export function RoleDetail({ api, id }: { api: ManagementApi; id: string }) {
  const base = `/roles/${encodeURIComponent(id)}`;
  const loaded = useLoad(() => api.get<Role>(base), [id]);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<string>();
  const role = loaded.data;
  useEffect(() => {
    setName(role?.name ?? '');
    setDescription(role?.description ?? '');
  }, [role]);
  if (loaded.error && !role) return <ErrorNotice message={loaded.error} />;
  if (!role) return <p className="loading">Loading…</p>;
  return (
    <>
      <p className="crumbs">
        <a href={href('roles')}>Roles</a> /
      </p>
      <h1>{role.name}</h1>
      <FormCard
        title="Settings"
        submitLabel="Save changes"
        onSubmit={async () => {
          loaded.show(await api.request<Role>('PATCH', base, { name: name.trim(), description: description.trim() }));
          return 'Saved.';
        }}
      >
        <div className="row by-label">
          <TextField grow label="Name" required maxLength={50} value={name} onValue={setName} />
          <TextField grow label="Description" maxLength={255} value={description} onValue={setDescription} />
        </div>
      </FormCard>
      <Permissions api={api} base={base} />
      <Users api={api} id={id} base={base} />
      <section className="card" aria-labelledby="role-danger">
        <h2 id="role-danger">Delete</h2>
        <ErrorNotice message={error} />
        <DeleteButton api={api} path={base} label="Delete role" question={`Delete the role ${role.name}? Its users lose its permissions.`} confirmLabel="Delete" then={() => go('roles')} onError={setError} />
      </section>
    </>
  );
}

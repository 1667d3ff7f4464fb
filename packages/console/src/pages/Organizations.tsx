/**
 * Organizations: the list (paged), creating one, and one organization's page: its names, its members (added by
 * email) with their roles in it, the connections its members sign in with, and deleting it.
 */
import { useEffect, useState } from 'react';
import { messageOf, type ManagementApi } from '../api.js';
import { DataTable, usePagedList } from '../components/DataTable.js';
import { SelectField, TextField } from '../components/fields.js';
import { SwitchField } from '../components/SwitchField.js';
import { FormCard } from '../components/FormCard.js';
import { go, href } from '../router.js';
import { ConfirmButton, DeleteButton } from '../components/ConfirmButton.js';
import { ErrorNotice, useLoad } from '../ui.js';
import { findUserByEmail, type Role } from './Roles.js';

interface Organization {
  id: string;
  name: string;
  display_name?: string;
}

interface Member {
  user_id: string;
  email?: string;
  name?: string;
  roles?: { id: string; name: string }[];
}

interface EnabledConnection {
  connection_id: string;
  assign_membership_on_login: boolean;
  connection: { name: string; strategy: string };
}

export function Organizations({ api }: { api: ManagementApi }) {
  const paged = usePagedList<Organization>(api, '/organizations', 'organizations');
  const [name, setName] = useState('');
  const [displayName, setDisplayName] = useState('');
  return (
    <>
      <h1>Organizations</h1>
      <p className="lead">The companies or teams your users belong to: each with its members, their roles, and how they sign in.</p>
      <FormCard
        title="Create an organization"
        submitLabel="Create organization"
        onSubmit={async () => {
          const created = await api.request<Organization>('POST', '/organizations', { name: name.trim(), ...(displayName.trim() && { display_name: displayName.trim() }) });
          go('organizations', created.id);
        }}
      >
        <div className="row by-label">
          <TextField grow label="Identifier" required maxLength={50} pattern="[a-z0-9][a-z0-9_\-]*" hint="Lower-case letters, digits, - and _: what applications send as organization." value={name} onValue={setName} />
          <TextField grow label="Display name" maxLength={255} value={displayName} onValue={setDisplayName} />
        </div>
      </FormCard>
      <DataTable
        caption="Organizations of this tenant"
        paged={paged}
        rowKey={(o) => o.id}
        empty="No organizations yet."
        columns={[
          { label: 'Name', cell: (o) => <a href={href('organizations', o.id)}>{o.display_name || o.name}</a> },
          { label: 'Identifier', cell: (o) => <code>{o.name}</code> },
        ]}
      />
    </>
  );
}

/** A member's roles in the organization: each removable (confirmed), and one to add from the tenant's roles. */
function MemberRoles({ api, base, member, roles, onChange }: { api: ManagementApi; base: string; member: Member; roles: Role[]; onChange: () => void }) {
  const [role, setRole] = useState('');
  const [error, setError] = useState<string>();
  const who = member.email ?? member.name ?? member.user_id;
  const held = new Set((member.roles ?? []).map((r) => r.id));
  const path = `${base}/members/${encodeURIComponent(member.user_id)}/roles`;
  const change = async (method: 'POST' | 'DELETE', roleId: string) => {
    setError(undefined);
    try {
      await api.request(method, path, { roles: [roleId] });
      setRole('');
      onChange();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const choices = roles.filter((r) => !held.has(r.id));
  return (
    <div className="stack">
      <ul className="tags" aria-label={`Roles of ${who}`}>
        {(member.roles ?? []).map((r) => (
          <li key={r.id}>
            <span>{r.name}</span>
            <ConfirmButton
              label="×"
              accessibleName={`Remove the role ${r.name} from ${who}`}
              question={`Remove the role ${r.name} from ${who} in this organization?`}
              confirmLabel="Remove role"
              danger
              onConfirm={() => change('DELETE', r.id)}
            />
          </li>
        ))}
      </ul>
      {choices.length > 0 && (
        <div className="row">
          <select aria-label={`Role to assign to ${who}`} value={role} onChange={(e) => setRole(e.target.value)}>
            <option value="">Choose a role…</option>
            {choices.map((r) => (
              <option key={r.id} value={r.id}>
                {r.name}
              </option>
            ))}
          </select>
          <button type="button" disabled={!role} onClick={() => void change('POST', role)} aria-label={`Assign the role to ${who}`}>
            Assign
          </button>
        </div>
      )}
      <ErrorNotice message={error} />
    </div>
  );
}

function Members({ api, base }: { api: ManagementApi; base: string }) {
  const paged = usePagedList<Member>(api, `${base}/members`, 'members', 20, { fields: 'user_id,email,name,roles', include_fields: 'true' });
  const roles = useLoad(() => api.page<Role>('/roles', 'roles', 0, 100), []);
  const [email, setEmail] = useState('');
  const [error, setError] = useState<string>();
  const remove = async (member: Member) => {
    setError(undefined);
    try {
      await api.request('DELETE', `${base}/members`, { members: [member.user_id] });
      paged.list.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <section className="card" aria-labelledby="org-members">
      <h2 id="org-members">Members</h2>
      <ErrorNotice message={error ?? roles.error} />
      <DataTable
        caption="Members of this organization"
        paged={paged}
        rowKey={(m) => m.user_id}
        empty="No members yet."
        columns={[
          { label: 'Member', cell: (m) => <a href={href('users', m.user_id)}>{m.email ?? m.name ?? m.user_id}</a> },
          { label: 'Roles', cell: (m) => <MemberRoles api={api} base={base} member={m} roles={roles.data?.items ?? []} onChange={paged.list.reload} /> },
          {
            label: 'Actions',
            cell: (m) => (
              <ConfirmButton
                label="Remove"
                accessibleName={`Remove ${m.email ?? m.user_id} from the organization`}
                question={`Remove ${m.email ?? m.user_id} from this organization? Their roles in it go too.`}
                confirmLabel="Remove member"
                danger
                onConfirm={() => remove(m)}
              />
            ),
          },
        ]}
      />
      <FormCard
        title="Add a member"
        submitLabel="Add member"
        onSubmit={async () => {
          const user = await findUserByEmail(api, email);
          await api.request('POST', `${base}/members`, { members: [user.user_id] });
          setEmail('');
          paged.list.reload();
          return `Added ${user.email ?? email}.`;
        }}
      >
        <TextField label="Email" type="email" required value={email} onValue={setEmail} hint="An existing user of this tenant." />
      </FormCard>
    </section>
  );
}

function Connections({ api, base }: { api: ManagementApi; base: string }) {
  const paged = usePagedList<EnabledConnection>(api, `${base}/enabled_connections`, 'enabled_connections');
  const all = useLoad(() => api.page<{ id: string; name: string }>('/connections', 'connections', 0, 100), []);
  const [connection, setConnection] = useState('');
  const [assign, setAssign] = useState(false);
  const [error, setError] = useState<string>();
  const enabled = new Set((paged.list.data?.items ?? []).map((c) => c.connection_id));
  const choices = (all.data?.items ?? []).filter((c) => !enabled.has(c.id));
  return (
    <section className="card" aria-labelledby="org-connections">
      <h2 id="org-connections">Connections</h2>
      <p>How members of this organization sign in when an application sends them with organization.</p>
      <ErrorNotice message={error ?? all.error} />
      <DataTable
        caption="Connections enabled for this organization"
        paged={paged}
        rowKey={(c) => c.connection_id}
        empty="No connections enabled yet."
        columns={[
          { label: 'Connection', cell: (c) => <a href={href('connections', c.connection_id)}>{c.connection.name}</a> },
          { label: 'Membership on login', cell: (c) => (c.assign_membership_on_login ? 'Added automatically' : 'Invited only') },
          {
            label: 'Actions',
            cell: (c) => (
              <ConfirmButton
                label="Disable"
                accessibleName={`Disable ${c.connection.name} for the organization`}
                question={`Disable ${c.connection.name} for this organization? Its members can no longer sign in to it with that connection.`}
                confirmLabel="Disable connection"
                danger
                onConfirm={async () => {
                  setError(undefined);
                  try {
                    await api.request('DELETE', `${base}/enabled_connections/${encodeURIComponent(c.connection_id)}`);
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
      {choices.length > 0 && (
        <FormCard
          title="Enable a connection"
          submitLabel="Enable"
          onSubmit={async () => {
            await api.request('POST', `${base}/enabled_connections`, { connection_id: connection, assign_membership_on_login: assign });
            setConnection('');
            paged.list.reload();
          }}
        >
          <SelectField label="Connection" required value={connection} onValue={setConnection} choices={[['', 'Choose a connection…'], ...choices.map((c) => [c.id, c.name] as const)]} />
          <SwitchField label="Make people who sign in with it members automatically" checked={assign} onValue={setAssign} />
        </FormCard>
      )}
    </section>
  );
}

export function OrganizationDetail({ api, id }: { api: ManagementApi; id: string }) {
  const base = `/organizations/${encodeURIComponent(id)}`;
  const loaded = useLoad(() => api.get<Organization>(base), [id]);
  const [displayName, setDisplayName] = useState('');
  const [error, setError] = useState<string>();
  const org = loaded.data;
  useEffect(() => setDisplayName(org?.display_name ?? ''), [org]);
  if (loaded.error && !org) return <ErrorNotice message={loaded.error} />;
  if (!org) return <p className="loading">Loading…</p>;
  return (
    <>
      <p className="crumbs">
        <a href={href('organizations')}>Organizations</a> /
      </p>
      <h1>{org.display_name || org.name}</h1>
      <dl className="facts">
        <div>
          <dt>Identifier</dt>
          <dd>
            <code>{org.name}</code>
          </dd>
        </div>
        <div>
          <dt>ID</dt>
          <dd>
            <code data-testid="organization-id">{org.id}</code>
          </dd>
        </div>
      </dl>
      <FormCard
        title="Settings"
        submitLabel="Save changes"
        onSubmit={async () => {
          loaded.show(await api.request<Organization>('PATCH', base, { display_name: displayName.trim() }));
          return 'Saved.';
        }}
      >
        <TextField label="Display name" maxLength={255} value={displayName} onValue={setDisplayName} />
      </FormCard>
      <Members api={api} base={base} />
      <Connections api={api} base={base} />
      <section className="card" aria-labelledby="org-danger">
        <h2 id="org-danger">Delete</h2>
        <ErrorNotice message={error} />
        <DeleteButton api={api} path={base} label="Delete organization" question={`Delete ${org.display_name || org.name}? Its memberships and member roles go with it; the users stay.`} confirmLabel="Delete" then={() => go('organizations')} onError={setError} />
      </section>
    </>
  );
}

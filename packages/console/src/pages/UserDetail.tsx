/**
 * One user: profile, block/unblock and delete, the two metadata objects as JSON, roles and the permissions they
 * give, linked identities, organizations and login sessions. Everything through the Management API.
 */
import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react';
import { messageOf, type ManagementApi } from '../api.js';
import { go, href } from '../router.js';
import { ConfirmButton, DeleteButton } from '../components/ConfirmButton.js';
import { DetailTabs } from '../components/DetailTabs.js';
import { ErrorNotice, Notice, Pager, useLoad } from '../ui.js';

export interface User {
  user_id: string;
  email?: string;
  name?: string;
  given_name?: string;
  family_name?: string;
  nickname?: string;
  picture?: string;
  blocked?: boolean;
  email_verified?: boolean;
  created_at?: string;
  last_login?: string;
  logins_count?: number;
  identities?: { connection: string; provider: string; user_id: string; isSocial?: boolean; profileData?: { email?: string } }[];
  user_metadata?: Record<string, unknown>;
  app_metadata?: Record<string, unknown>;
}

interface Role {
  id: string;
  name: string;
  description?: string;
}

const PER_PAGE = 10;
const enc = encodeURIComponent;

/** A card with its heading, labelled by it. */
function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section className="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** Runs an API change, showing its error in place; resolves true when it went through. */
function useAction(): [string | undefined, (run: () => Promise<unknown>) => Promise<boolean>] {
  const [error, setError] = useState<string>();
  const act = async (run: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await run();
      return true;
    } catch (err) {
      setError(messageOf(err));
      return false;
    }
  };
  return [error, act];
}

const PROFILE_FIELDS = [
  ['name', 'Name'],
  ['given_name', 'Given name'],
  ['family_name', 'Family name'],
  ['nickname', 'Nickname'],
  ['picture', 'Picture URL'],
] as const;

function Profile({ api, path, user, onSaved }: { api: ManagementApi; path: string; user: User; onSaved: () => void }) {
  const initial = () => Object.fromEntries(PROFILE_FIELDS.map(([field]) => [field, user[field] ?? ''])) as Record<string, string>;
  const [draft, setDraft] = useState(initial);
  const [saved, setSaved] = useState(false);
  const [error, act] = useAction();
  useEffect(() => setDraft(initial()), [user]);
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    // Only what changed; an emptied field is left as it is (the API has no "unset" for these but a new value).
    const changes = Object.fromEntries(PROFILE_FIELDS.map(([f]) => [f, draft[f]!.trim()]).filter(([f, v]) => v !== '' && v !== (user[f as keyof User] ?? '')));
    if (Object.keys(changes).length === 0) return;
    if (await act(() => api.request('PATCH', path, changes))) {
      setSaved(true);
      onSaved();
    }
  };
  return (
    <form className="card" onSubmit={save} aria-labelledby="profile">
      <h2 id="profile">Profile</h2>
      <div className="choices">
        {PROFILE_FIELDS.map(([field, label]) => (
          <div className="field" key={field}>
            <label htmlFor={`profile-${field}`}>{label}</label>
            <input id={`profile-${field}`} type={field === 'picture' ? 'url' : 'text'} value={draft[field]} onChange={(e) => setDraft({ ...draft, [field]: e.target.value })} />
          </div>
        ))}
      </div>
      <ErrorNotice message={error} />
      {saved && <Notice>Profile saved.</Notice>}
      <button type="submit" className="primary">
        Save profile
      </button>
    </form>
  );
}

/**
 * A metadata object as JSON in a textarea. Nothing is sent until it parses as an object; the API merges one
 * level deep, so keys taken out here are sent as null (which deletes them), and `{}` clears the object.
 */
function MetadataEditor({ api, path, field, value, onSaved }: { api: ManagementApi; path: string; field: 'user_metadata' | 'app_metadata'; value: Record<string, unknown> | undefined; onSaved: () => void }) {
  const shown = JSON.stringify(value ?? {}, null, 2);
  const [text, setText] = useState(shown);
  const [invalid, setInvalid] = useState<string>();
  const [saved, setSaved] = useState(false);
  const [error, act] = useAction();
  const id = useId();
  useEffect(() => setText(shown), [shown]);
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      setInvalid(`Not saved: this is not valid JSON (${messageOf(err)}).`);
      return;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      setInvalid('Not saved: the metadata must be a JSON object, like {"plan": "gold"}.');
      return;
    }
    setInvalid(undefined);
    const next = parsed as Record<string, unknown>;
    const removed = Object.keys(value ?? {}).filter((key) => !(key in next));
    const body = Object.keys(next).length === 0 ? {} : { ...Object.fromEntries(removed.map((key) => [key, null])), ...next };
    if (await act(() => api.request('PATCH', path, { [field]: body }))) {
      setSaved(true);
      onSaved();
    }
  };
  return (
    <form onSubmit={save} className="field">
      <label htmlFor={id}>{field}</label>
      <textarea
        id={id}
        rows={Math.min(12, Math.max(3, text.split('\n').length))}
        spellCheck={false}
        value={text}
        aria-invalid={invalid ? true : undefined}
        aria-describedby={invalid ? `${id}-invalid` : undefined}
        onChange={(e) => {
          setText(e.target.value);
          setInvalid(undefined);
          setSaved(false);
        }}
      />
      {invalid && (
        <p id={`${id}-invalid`} className="notice problem" role="alert">
          {invalid}
        </p>
      )}
      <ErrorNotice message={error} />
      {saved && <Notice>{field} saved.</Notice>}
      <div className="actions">
        <button type="submit">Save {field}</button>
      </div>
    </form>
  );
}

function Roles({ api, path }: { api: ManagementApi; path: string }) {
  const [page, setPage] = useState(0);
  const roles = useLoad(() => api.page<Role>(`${path}/roles`, 'roles', page, PER_PAGE), [path, page]);
  // The choices: the tenant's roles (the first hundred; a tenant has a handful).
  const all = useLoad(() => api.page<Role>('/roles', 'roles', 0, 100), []);
  const [chosen, setChosen] = useState('');
  const [error, act] = useAction();
  const held = new Set(roles.data?.items.map((r) => r.id));
  const choices = (all.data?.items ?? []).filter((r) => !held.has(r.id));
  const assign = async (event: FormEvent) => {
    event.preventDefault();
    const role = chosen;
    if (role && (await act(() => api.request('POST', `${path}/roles`, { roles: [role] })))) {
      setChosen('');
      roles.reload();
    }
  };
  return (
    <Section id="roles" title="Roles">
      <ErrorNotice message={roles.error ?? all.error ?? error} />
      {roles.data?.items.length === 0 && <p>No roles.</p>}
      <ul className="plain" aria-label="Roles of this user">
        {roles.data?.items.map((role) => (
          <li key={role.id} className="row">
            <span className="grow">
              <a href={href('roles', role.id)}>{role.name}</a> {role.description && <span className="muted">— {role.description}</span>}
            </span>
            <ConfirmButton label="Remove" accessibleName={`Remove role ${role.name}`} question={`Remove the role ${role.name} from this user?`} confirmLabel="Remove role" danger onConfirm={async () => void ((await act(() => api.request('DELETE', `${path}/roles`, { roles: [role.id] }))) && roles.reload())} />
          </li>
        ))}
      </ul>
      {roles.data && <Pager page={page} perPage={PER_PAGE} total={roles.data.total} onPage={setPage} />}
      {choices.length > 0 && (
        <form className="row" onSubmit={assign}>
          <div className="field grow">
            <label htmlFor="assign-role">Role to assign</label>
            <select id="assign-role" required value={chosen} onChange={(e) => setChosen(e.target.value)}>
              <option value="">Choose a role…</option>
              {choices.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.name}
                </option>
              ))}
            </select>
          </div>
          <button type="submit" className="primary">
            Assign role
          </button>
        </form>
      )}
    </Section>
  );
}

function Permissions({ api, path }: { api: ManagementApi; path: string }) {
  const [page, setPage] = useState(0);
  const list = useLoad(
    () => api.page<{ permission_name: string; resource_server_identifier: string; sources?: { source_name: string }[] }>(`${path}/permissions`, 'permissions', page, PER_PAGE),
    [path, page],
  );
  return (
    <Section id="permissions" title="Permissions">
      <p className="muted small">From the user's roles. Permissions are not assigned to users one by one here (the API answers 501): give the user a role that holds them.</p>
      <ErrorNotice message={list.error} />
      {list.data?.items.length === 0 && <p>No permissions.</p>}
      <ul className="plain" aria-label="Permissions of this user">
        {list.data?.items.map((p) => (
          <li key={`${p.resource_server_identifier} ${p.permission_name}`}>
            <code>{p.permission_name}</code> <span className="muted">on {p.resource_server_identifier}, from {p.sources?.map((s) => s.source_name).join(', ') || '—'}</span>
          </li>
        ))}
      </ul>
      {list.data && <Pager page={page} perPage={PER_PAGE} total={list.data.total} onPage={setPage} />}
    </Section>
  );
}

/** The user's identities: the first is the user's own; the others were linked in and can be unlinked. */
function Identities({ api, path, user, onChanged }: { api: ManagementApi; path: string; user: User; onChanged: () => void }) {
  const [error, act] = useAction();
  const identities = user.identities ?? [];
  return (
    <Section id="identities" title="Linked identities">
      <ErrorNotice message={error} />
      <ul className="plain" aria-label="Identities">
        {identities.map((identity, i) => (
          <li key={`${identity.provider}|${identity.user_id}`} className="row">
            <span className="grow">
              <code>
                {identity.provider}|{identity.user_id}
              </code>{' '}
              <span className="muted">
                {identity.connection}
                {identity.profileData?.email ? `, ${identity.profileData.email}` : ''}
                {i === 0 ? ' (primary)' : ''}
              </span>
            </span>
            {i > 0 && (
              <ConfirmButton
                label="Unlink"
                accessibleName={`Unlink ${identity.provider}|${identity.user_id}`}
                question={`Unlink ${identity.provider}|${identity.user_id}? It becomes a user of its own again.`}
                confirmLabel="Unlink identity"
                danger
                onConfirm={async () => void ((await act(() => api.request('DELETE', `${path}/identities/${enc(identity.provider)}/${enc(identity.user_id)}`))) && onChanged())}
              />
            )}
          </li>
        ))}
      </ul>
      {identities.length <= 1 && <p className="muted small">No other identity is linked to this user.</p>}
    </Section>
  );
}

function Organizations({ api, path }: { api: ManagementApi; path: string }) {
  const [page, setPage] = useState(0);
  const list = useLoad(() => api.page<{ id: string; name: string; display_name?: string }>(`${path}/organizations`, 'organizations', page, PER_PAGE), [path, page]);
  return (
    <Section id="organizations" title="Organizations">
      <ErrorNotice message={list.error} />
      {list.data?.items.length === 0 && <p>Not a member of any organization.</p>}
      <ul className="plain" aria-label="Organizations of this user">
        {list.data?.items.map((org) => (
          <li key={org.id}>
            <a href={href('organizations', org.id)}>{org.display_name ?? org.name}</a> <code className="muted">{org.name}</code>
          </li>
        ))}
      </ul>
      {list.data && <Pager page={page} perPage={PER_PAGE} total={list.data.total} onPage={setPage} />}
    </Section>
  );
}

interface Session {
  id: string;
  created_at: string;
  last_interacted_at: string;
  expires_at: string;
  device?: { initial_ip?: string; initial_user_agent?: string };
  clients?: { client_id: string }[];
  authentication?: { methods?: { name: string }[] };
}

/** Login sessions, paged as the API pages them (from/take: forward, and back through the pages seen). */
function Sessions({ api, path }: { api: ManagementApi; path: string }) {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const from = cursors[cursors.length - 1];
  const list = useLoad(() => api.get<{ sessions: Session[]; next?: string }>(`${path}/sessions?${new URLSearchParams({ take: String(PER_PAGE), ...(from && { from }) })}`), [path, from]);
  const [error, act] = useAction();
  const [done, setDone] = useState<string>();
  const when = (iso: string) => new Date(iso).toLocaleString();
  const changed = (message: string) => {
    setDone(message);
    setCursors([undefined]);
    list.reload();
  };
  return (
    <Section id="sessions" title="Sessions">
      <ErrorNotice message={list.error ?? error} />
      {done && <Notice>{done}</Notice>}
      {list.data?.sessions.length === 0 && <p>No active session.</p>}
      {list.data && list.data.sessions.length > 0 && (
        <table>
          <caption className="visually-hidden">Sessions of this user</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Last active</th>
              <th scope="col">Device</th>
              <th scope="col">Applications</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.sessions.map((s) => (
              <tr key={s.id} data-testid="session">
                <td data-label="Started">
                  {when(s.created_at)}
                  <br />
                  <span className="muted small">{s.authentication?.methods?.map((m) => m.name).join(', ')}</span>
                </td>
                <td data-label="Last active">
                  {when(s.last_interacted_at)}
                  <br />
                  <span className="muted small">ends {when(s.expires_at)}</span>
                </td>
                <td data-label="Device">
                  {s.device?.initial_ip ?? '—'}
                  <br />
                  <span className="muted small">{s.device?.initial_user_agent}</span>
                </td>
                <td data-label="Applications">{s.clients?.length ? s.clients.map((c) => <code key={c.client_id}>{c.client_id} </code>) : '—'}</td>
                <td data-label="Actions">
                  <ConfirmButton
                    label="Revoke"
                    accessibleName={`Revoke the session started ${when(s.created_at)}`}
                    question="Revoke this session? The browser is signed out, the refresh tokens issued from it stop working, and its applications are told."
                    confirmLabel="Revoke session"
                    danger
                    onConfirm={async () => void ((await act(() => api.request('POST', `/sessions/${enc(s.id)}/revoke`))) && changed('Session revoked.'))}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="actions">
        {cursors.length > 1 && (
          <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>
            Previous
          </button>
        )}
        {list.data?.next && (
          <button type="button" onClick={() => setCursors([...cursors, list.data!.next])}>
            Next
          </button>
        )}
        {list.data && list.data.sessions.length > 0 && (
          <ConfirmButton label="End all sessions" question="End every session of this user? They are signed out everywhere." confirmLabel="End all" danger onConfirm={async () => void ((await act(() => api.request('DELETE', `${path}/sessions`))) && changed('Every session ended.'))} />
        )}
      </div>
    </Section>
  );
}

export function UserDetail({ api, id }: { api: ManagementApi; id: string }) {
  const path = `/users/${enc(id)}`;
  const loaded = useLoad(() => api.get<User>(path), [id]);
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();
  const user = loaded.data;
  if (loaded.error) return <ErrorNotice message={loaded.error} />;
  if (!user) return <p className="loading">Loading…</p>;
  const setBlocked = async (blocked: boolean) => {
    setError(undefined);
    try {
      await api.request('PATCH', path, { blocked });
      setDone(blocked ? 'Blocked: this user can no longer log in.' : 'Unblocked: this user can log in again.');
      loaded.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <>
      <p className="crumbs">
        <a href={href('users')}>Users</a> /
      </p>
      <h1>{user.email ?? user.user_id}</h1>
      <dl className="facts">
        <div>
          <dt>User ID</dt>
          <dd>
            <code>{user.user_id}</code>
          </dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd data-testid="user-status">{user.blocked ? 'Blocked' : 'Active'}</dd>
        </div>
        <div>
          <dt>Email verified</dt>
          <dd>{user.email_verified ? 'Yes' : 'No'}</dd>
        </div>
        <div>
          <dt>Connection</dt>
          <dd>{user.identities?.[0]?.connection ?? '—'}</dd>
        </div>
        <div>
          <dt>Logins</dt>
          <dd>
            {user.logins_count ?? 0}
            {user.last_login ? `, last ${new Date(user.last_login).toLocaleString()}` : ''}
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{user.created_at ? new Date(user.created_at).toLocaleString() : '—'}</dd>
        </div>
      </dl>
      <ErrorNotice message={error} />
      {done && <Notice>{done}</Notice>}
      <div className="actions">
        {user.blocked ? (
          <button type="button" onClick={() => setBlocked(false)}>
            Unblock
          </button>
        ) : (
          <ConfirmButton label="Block" question={`Block ${user.email ?? user.user_id}? They will not be able to log in until unblocked.`} confirmLabel="Block user" danger onConfirm={() => setBlocked(true)} />
        )}
        <DeleteButton api={api} path={path} label="Delete" question={`Delete ${user.email ?? user.user_id}? This cannot be undone.`} confirmLabel="Delete user" then={() => go('users')} onError={setError} />
      </div>
      <DetailTabs
        label="Parts of this user"
        tabs={[
          {
            id: 'profile',
            label: 'Profile',
            content: (
              <>
                <Profile api={api} path={path} user={user} onSaved={loaded.reload} />
                <Section id="metadata" title="Metadata">
                  <p className="muted small">JSON objects. user_metadata is the user's own (they may change it with their token); app_metadata is for your back end (roles, plans, flags).</p>
                  <MetadataEditor api={api} path={path} field="user_metadata" value={user.user_metadata} onSaved={loaded.reload} />
                  <MetadataEditor api={api} path={path} field="app_metadata" value={user.app_metadata} onSaved={loaded.reload} />
                </Section>
              </>
            ),
          },
          {
            id: 'roles',
            label: 'Roles and permissions',
            content: (
              <>
                <Roles api={api} path={path} />
                <Permissions api={api} path={path} />
              </>
            ),
          },
          { id: 'identities', label: 'Identities', content: <Identities api={api} path={path} user={user} onChanged={loaded.reload} /> },
          { id: 'organizations', label: 'Organizations', content: <Organizations api={api} path={path} /> },
          { id: 'sessions', label: 'Sessions', content: <Sessions api={api} path={path} /> },
        ]}
      />
    </>
  );
}

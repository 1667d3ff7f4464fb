/** Users: search with the API's `q` syntax, paged; one user's profile, block/unblock and delete. */
import { useState, type FormEvent } from 'react';
import { messageOf, type ManagementApi } from '../api.js';
import { go, href } from '../router.js';
import { ConfirmButton, ErrorNotice, Notice, Pager, useLoad } from '../ui.js';
import { listConnections } from './Applications.js';

interface User {
  user_id: string;
  email?: string;
  name?: string;
  blocked?: boolean;
  email_verified?: boolean;
  created_at?: string;
  last_login?: string;
  logins_count?: number;
  identities?: { connection: string; provider: string }[];
}

const PER_PAGE = 20;

/** Creating a user in one of the tenant's database connections (the API checks the password policy). */
function CreateUser({ api }: { api: ManagementApi }) {
  const connections = useLoad(async () => (await listConnections(api)).filter((c) => c.strategy === 'auth0'), []);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [connection, setConnection] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api.request<User>('POST', '/users', { connection: connection || connections.data?.[0]?.name, email: email.trim(), password });
      go('users', created.user_id);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <details className="card">
      <summary>Create a user</summary>
      <form className="row" onSubmit={submit}>
        <div className="field grow">
          <label htmlFor="new-email">Email</label>
          <input id="new-email" type="email" required autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} />
        </div>
        <div className="field grow">
          <label htmlFor="new-password">Password</label>
          <input id="new-password" type="password" required autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="new-connection">Connection</label>
          <select id="new-connection" value={connection || connections.data?.[0]?.name || ''} onChange={(e) => setConnection(e.target.value)}>
            {connections.data?.map((c) => (
              <option key={c.id}>{c.name}</option>
            ))}
          </select>
        </div>
        <button type="submit" className="primary" disabled={busy || !connections.data?.length}>
          Create user
        </button>
      </form>
      <ErrorNotice message={error ?? connections.error} />
    </details>
  );
}

export function Users({ api }: { api: ManagementApi }) {
  const [typed, setTyped] = useState('');
  const [query, setQuery] = useState('');
  const [page, setPage] = useState(0);
  const list = useLoad(
    () => api.page<User>('/users', 'users', page, PER_PAGE, { search_engine: 'v3', ...(query && { q: query }) }),
    [query, page],
  );
  const search = (event: FormEvent) => {
    event.preventDefault();
    setPage(0);
    setQuery(typed.trim());
  };
  return (
    <>
      <h1>Users</h1>
      <CreateUser api={api} />
      <form role="search" className="row" onSubmit={search}>
        <div className="field grow">
          <label htmlFor="user-search">Search</label>
          <input
            id="user-search"
            type="search"
            value={typed}
            placeholder='jane, email:"jane@example.com", blocked:true'
            aria-describedby="user-search-hint"
            onChange={(e) => setTyped(e.target.value)}
          />
          <small id="user-search-hint">A word matches the start of an email, name or username; field:value and value* work as in the API's q.</small>
        </div>
        <button type="submit" className="primary">
          Search
        </button>
      </form>
      <ErrorNotice message={list.error} />
      <table>
        <caption className="visually-hidden">Users</caption>
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.items.map((user) => (
            <tr key={user.user_id}>
              <td data-label="Email">
                <a href={href('users', user.user_id)}>{user.email ?? user.user_id}</a>
              </td>
              <td data-label="Name">{user.name ?? '—'}</td>
              <td data-label="Status">{user.blocked ? <span className="badge problem">Blocked</span> : <span className="badge">Active</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data && list.data.items.length === 0 && <p>No user matches.</p>}
      {list.loading && !list.data && <p className="loading">Loading…</p>}
      {list.data && <Pager page={page} perPage={PER_PAGE} total={list.data.total} onPage={setPage} />}
    </>
  );
}

export function UserDetail({ api, id }: { api: ManagementApi; id: string }) {
  const path = `/users/${encodeURIComponent(id)}`;
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
          <dd>{user.identities?.map((i) => i.connection).join(', ') ?? '—'}</dd>
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
        <ConfirmButton
          label="Delete"
          question={`Delete ${user.email ?? user.user_id}? This cannot be undone.`}
          confirmLabel="Delete user"
          danger
          onConfirm={async () => {
            try {
              await api.request('DELETE', path);
              go('users');
            } catch (err) {
              setError(messageOf(err));
            }
          }}
        />
      </div>
    </>
  );
}

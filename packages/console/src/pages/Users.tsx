/** Users: search with the API's `q` syntax, paged, and creating one; one user's page is UserDetail.tsx. */
import { useState, type FormEvent } from 'react';
import { messageOf, type ManagementApi } from '../api.js';
import { go, href } from '../router.js';
import { ErrorNotice, Pager, useLoad } from '../ui.js';
import { listConnections } from './Applications.js';
import type { User } from './UserDetail.js';

export { UserDetail } from './UserDetail.js';

const PER_PAGE = 20;
/** The fields the API's `q` takes (management/user-search.ts). */
const SEARCH_FIELDS = ['email', 'email.domain', 'user_id', 'name', 'nickname', 'given_name', 'family_name', 'username', 'phone_number', 'email_verified', 'blocked', 'connection', 'user_metadata.<key>', 'app_metadata.<key>'];

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
      <form role="search" onSubmit={search}>
        <div className="row">
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
          </div>
          <button type="submit" className="primary">
            Search
          </button>
        </div>
        <p id="user-search-hint" className="muted small">
          A word matches the start of an email, name, nickname or username. <code>field:value</code>, <code>field:"two words"</code> and <code>value*</code> (a
          prefix) narrow it; terms are joined with AND (no OR, NOT or parentheses).
        </p>
      </form>
      <details className="small">
        <summary>Fields you can search</summary>
        <p>
          {SEARCH_FIELDS.map((f, i) => (
            <span key={f}>
              {i > 0 && ', '}
              <code>{f}</code>
            </span>
          ))}
          . <code>blocked</code> and <code>email_verified</code> take true or false; <code>email.domain</code> and <code>connection</code> a whole value. At most 16 terms, 4 of them with *.
        </p>
      </details>
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

/** Users: search with the API's `q` syntax, paged, and creating one; one user's page is UserDetail.tsx. */
import { useState, type FormEvent } from 'react';
import type { ManagementApi } from '../api.js';
import { DataTable, usePagedList } from '../components/DataTable.js';
import { SelectField, TextField } from '../components/fields.js';
import { FormCard } from '../components/FormCard.js';
import { go, href } from '../router.js';
import { ErrorNotice, useLoad } from '../ui.js';
import { listConnections } from './Applications.js';
import type { User } from './UserDetail.js';

export { UserDetail } from './UserDetail.js';

/** The fields the API's `q` takes (management/user-search.ts). */
const SEARCH_FIELDS = ['email', 'email.domain', 'user_id', 'name', 'nickname', 'given_name', 'family_name', 'username', 'phone_number', 'email_verified', 'blocked', 'connection', 'user_metadata.<key>', 'app_metadata.<key>'];

/** Creating a user in one of the tenant's database connections (the API checks the password policy). */
function CreateUser({ api }: { api: ManagementApi }) {
  const connections = useLoad(async () => (await listConnections(api)).filter((c) => c.strategy === 'auth0'), []);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [connection, setConnection] = useState('');
  return (
    <FormCard
      title="Create a user"
      submitLabel="Create user"
      folded
      intro={<ErrorNotice message={connections.error} />}
      onSubmit={async () => {
        const created = await api.request<User>('POST', '/users', { connection: connection || connections.data?.[0]?.name, email: email.trim(), password });
        go('users', created.user_id);
      }}
    >
      <div className="row by-label">
        <TextField grow label="Email" type="email" required autoComplete="off" value={email} onValue={setEmail} />
        <TextField grow label="Password" type="password" required autoComplete="new-password" value={password} onValue={setPassword} />
        <SelectField label="Connection" value={connection || connections.data?.[0]?.name || ''} onValue={setConnection} choices={(connections.data ?? []).map((c) => [c.name, c.name] as const)} />
      </div>
    </FormCard>
  );
}

export function Users({ api }: { api: ManagementApi }) {
  const [typed, setTyped] = useState('');
  const [query, setQuery] = useState('');
  const paged = usePagedList<User>(api, '/users', 'users', 20, { search_engine: 'v3', ...(query && { q: query }) });
  const search = (event: FormEvent) => {
    event.preventDefault();
    paged.setPage(0);
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
      <DataTable
        caption="Users"
        paged={paged}
        rowKey={(user) => user.user_id}
        empty="No user matches."
        columns={[
          { label: 'Email', cell: (user) => <a href={href('users', user.user_id)}>{user.email ?? user.user_id}</a> },
          { label: 'Name', cell: (user) => user.name ?? '—' },
          { label: 'Status', cell: (user) => (user.blocked ? <span className="badge problem">Blocked</span> : <span className="badge">Active</span>) },
        ]}
      />
    </>
  );
}

/**
 * One application: its settings, URLs and grant types (saved with PATCH), the connections people log in with,
 * the APIs it may get tokens for (client grants), the secret rotated and shown once, and a test login through
 * the hosted page.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { messageOf, type ManagementApi } from '../api.js';
import { href } from '../router.js';
import { ConfirmButton } from '../components/ConfirmButton.js';
import { DetailTabs } from '../components/DetailTabs.js';
import { ErrorNotice, Notice, Pager, SecretOnce, UrlList, urls, useLoad } from '../ui.js';
import type { ClientGrant, ResourceServer } from './Apis.js';
import { APP_TYPES, createdSecrets, listConnections, type Application } from './Applications.js';
import { TestLogin } from './TestLogin.js';

interface Draft {
  name: string;
  description: string;
  grant_types: string[];
  callbacks: string[];
  allowed_logout_urls: string[];
  web_origins: string[];
  allowed_origins: string[];
}

function draftOf(app: Application): Draft {
  return {
    name: app.name,
    description: app.description ?? '',
    grant_types: app.grant_types ?? [],
    callbacks: app.callbacks ?? [],
    allowed_logout_urls: app.allowed_logout_urls ?? [],
    web_origins: app.web_origins ?? [],
    allowed_origins: app.allowed_origins ?? [],
  };
}

/** The grants an application may be allowed, in the reference's names; the API refuses what its type cannot have. */
const GRANT_TYPES: [string, string][] = [
  ['authorization_code', 'Authorization code'],
  ['implicit', 'Implicit'],
  ['refresh_token', 'Refresh token'],
  ['client_credentials', 'Client credentials'],
  ['password', 'Password'],
  ['http://auth0.com/oauth/grant-type/password-realm', 'Password (realm)'],
  ['http://auth0.com/oauth/grant-type/passwordless/otp', 'Passwordless OTP'],
  ['http://auth0.com/oauth/grant-type/mfa-otp', 'MFA: one-time password'],
  ['http://auth0.com/oauth/grant-type/mfa-oob', 'MFA: out of band'],
  ['http://auth0.com/oauth/grant-type/mfa-recovery-code', 'MFA: recovery code'],
];

const GRANTS_PER_PAGE = 10;

/** A grant's scopes as boxes; a box changes at once and is saved at once (the list reloads after). */
function GrantScopes({ grant, rs, onSave }: { grant: ClientGrant; rs: ResourceServer; onSave: (scope: string[]) => Promise<void> }) {
  const [scope, setScope] = useState(grant.scope);
  useEffect(() => setScope(grant.scope), [grant.scope]);
  return (
    <fieldset>
      <legend>Scopes for {rs.name}</legend>
      <div className="choices">
        {rs.scopes.map((s) => (
          <label className="check" key={s.value}>
            <input
              type="checkbox"
              checked={scope.includes(s.value)}
              onChange={() => {
                const next = scope.includes(s.value) ? scope.filter((v) => v !== s.value) : [...scope, s.value];
                setScope(next);
                void onSave(next);
              }}
            />
            {s.value}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/**
 * The APIs an application may get client-credentials tokens for (its client grants): each grant's scopes,
 * editable, and removable; a new grant starts with all the API's scopes.
 */
function ClientGrants({ api, app, onChange }: { api: ManagementApi; app: Application; onChange?: (audiences: string[]) => void }) {
  const apis = useLoad(() => api.page<ResourceServer>('/resource-servers', 'resource_servers', 0, 100), []);
  const [page, setPage] = useState(0);
  const grants = useLoad(() => api.page<ClientGrant>('/client-grants', 'client_grants', page, GRANTS_PER_PAGE, { client_id: app.client_id }), [app.client_id, page]);
  const [audience, setAudience] = useState('');
  const [error, setError] = useState<string>();
  useEffect(() => onChange?.((grants.data?.items ?? []).map((g) => g.audience)), [grants.data]);
  const granted = new Set((grants.data?.items ?? []).map((g) => g.audience));
  const choices = (apis.data?.items ?? []).filter((rs) => !rs.is_system && !granted.has(rs.identifier));
  const act = async (run: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await run();
    } catch (err) {
      setError(messageOf(err));
    }
    // Success or not, show what the API now holds (a refused scope change puts its box back).
    grants.reload();
  };
  const grant = async (event: FormEvent) => {
    event.preventDefault();
    const rs = choices.find((c) => c.identifier === (audience || choices[0]?.identifier));
    if (!rs) return;
    await act(() => api.request('POST', '/client-grants', { client_id: app.client_id, audience: rs.identifier, scope: rs.scopes.map((s) => s.value) }));
    setAudience('');
  };
  return (
    <>
      <ErrorNotice message={apis.error ?? grants.error ?? error} />
      {grants.data && grants.data.items.length === 0 && <p>This application may not get a token for any API yet.</p>}
      <ul className="plain" aria-label="Authorized APIs">
        {grants.data?.items.map((g) => {
          const rs = apis.data?.items.find((r) => r.identifier === g.audience);
          return (
            <li key={g.id}>
              <div className="row">
                <code className="grow">{g.audience}</code>
                <ConfirmButton label="Remove access" accessibleName={`Remove access to ${g.audience}`} question={`Stop ${app.name} getting tokens for ${g.audience}?`} confirmLabel="Remove access" danger onConfirm={() => act(() => api.request('DELETE', `/client-grants/${encodeURIComponent(g.id)}`))} />
              </div>
              {rs && rs.scopes.length > 0 ? (
                <GrantScopes grant={g} rs={rs} onSave={(scope) => act(() => api.request('PATCH', `/client-grants/${encodeURIComponent(g.id)}`, { scope }))} />
              ) : (
                g.scope.length > 0 && <span className="muted">({g.scope.join(' ')})</span>
              )}
            </li>
          );
        })}
      </ul>
      {grants.data && <Pager page={page} perPage={GRANTS_PER_PAGE} total={grants.data.total} onPage={setPage} />}
      {choices.length > 0 && (
        <form className="row" onSubmit={grant}>
          <div className="field grow">
            <label htmlFor="grant-api">API</label>
            <select id="grant-api" value={audience || choices[0]?.identifier} onChange={(e) => setAudience(e.target.value)}>
              {choices.map((rs) => (
                <option key={rs.id} value={rs.identifier}>
                  {rs.name} ({rs.identifier})
                </option>
              ))}
            </select>
          </div>
          <button type="submit" className="primary">
            Authorize
          </button>
        </form>
      )}
      {apis.data && choices.length === 0 && granted.size === 0 && (
        <p>
          <a href={href('apis')}>Create an API</a> first.
        </p>
      )}
    </>
  );
}

/**
 * A machine-to-machine application's quick start: grant it an API (a client grant with all the API's scopes),
 * then the curl that gets a token with client_credentials, pre-filled with this tenant's values.
 */
function MachineQuickStart({ api, app, domain, secret }: { api: ManagementApi; app: Application; domain: string; secret?: string }) {
  const [audiences, setAudiences] = useState<string[]>([]);
  const shown = audiences[0] ?? '<an API identifier>';
  const body = JSON.stringify({ grant_type: 'client_credentials', client_id: app.client_id, client_secret: secret ?? '<the client secret>', audience: shown }, null, 2);
  const curl = [`curl --request POST '${domain}/oauth/token' \\`, `  --header 'content-type: application/json' \\`, `  --data '${body.replace(/\n/g, '\n  ')}'`].join('\n');
  return (
    <section className="card" aria-labelledby="quick-start">
      <h2 id="quick-start">Quick start: call an API from a service</h2>
      <h3>1. Authorized APIs</h3>
      <ClientGrants api={api} app={app} onChange={setAudiences} />
      <h3>2. Get a token</h3>
      <pre tabIndex={0}>
        <code data-testid="curl">{curl}</code>
      </pre>
      <p className="muted">The answer's access_token goes in the API call's Authorization: Bearer header.</p>
    </section>
  );
}

/** Which connections people may log in to this application with (PATCH /connections/{id}/clients). */
function AppConnections({ api, app }: { api: ManagementApi; app: Application }) {
  const connections = useLoad(() => listConnections(api), [app.client_id]);
  const [error, setError] = useState<string>();
  const toggle = async (id: string, status: boolean) => {
    setError(undefined);
    try {
      await api.request('PATCH', `/connections/${encodeURIComponent(id)}/clients`, [{ client_id: app.client_id, status }]);
      connections.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <section className="card" aria-labelledby="connections">
      <h2 id="connections">Connections</h2>
      <p>How people may log in to this application.</p>
      <ErrorNotice message={connections.error ?? error} />
      {connections.data?.length === 0 && <p>This tenant has no connections.</p>}
      <ul className="plain">
        {connections.data?.map((c) => {
          const enabled = c.enabled_clients?.includes(app.client_id) ?? false;
          return (
            <li key={c.id}>
              <label className="check">
                <input type="checkbox" checked={enabled} onChange={() => void toggle(c.id, !enabled)} />
                <span>
                  {c.name} <span className="muted">({c.strategy})</span>
                </span>
              </label>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

export function ApplicationDetail({ api, id, domain }: { api: ManagementApi; id: string; domain: string }) {
  const loaded = useLoad(() => api.get<Application>(`/clients/${encodeURIComponent(id)}`), [id]);
  const [draft, setDraft] = useState<Draft>();
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState(false);
  const [secret] = useState<string | undefined>(() => createdSecrets.get(id));
  // A rotated secret is shown where it was asked for, in the credentials card.
  const [rotated, setRotated] = useState<string>();
  const [rotateError, setRotateError] = useState<string>();
  useEffect(() => {
    // Shown once: forget it as soon as this page has it.
    createdSecrets.delete(id);
  }, [id]);
  useEffect(() => {
    if (loaded.data) setDraft(draftOf(loaded.data));
  }, [loaded.data]);

  const app = loaded.data;
  if (loaded.error) return <ErrorNotice message={loaded.error} />;
  if (!app || !draft) return <p className="loading">Loading…</p>;
  const confidential = app.token_endpoint_auth_method !== undefined && app.token_endpoint_auth_method !== 'none';
  const machine = app.app_type === 'non_interactive';

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    setSaved(false);
    try {
      await api.request('PATCH', `/clients/${encodeURIComponent(id)}`, {
        name: draft.name.trim(),
        ...(draft.description !== (app.description ?? '') && { description: draft.description.trim() }),
        ...(draft.grant_types.join() !== (app.grant_types ?? []).join() && { grant_types: draft.grant_types }),
        callbacks: urls(draft.callbacks),
        allowed_logout_urls: urls(draft.allowed_logout_urls),
        web_origins: urls(draft.web_origins),
        allowed_origins: urls(draft.allowed_origins),
      });
      setSaved(true);
      loaded.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const set = (field: keyof Draft) => (value: string[]) => setDraft({ ...draft, [field]: value });

  return (
    <>
      <p className="crumbs">
        <a href={href('applications')}>Applications</a> /
      </p>
      <h1>{app.name}</h1>
      <dl className="facts">
        <div>
          <dt>Client ID</dt>
          <dd>
            <code data-testid="client-id">{app.client_id}</code>
          </dd>
        </div>
        <div>
          <dt>Type</dt>
          <dd>{APP_TYPES[app.app_type ?? '']?.label ?? app.app_type}</dd>
        </div>
        <div>
          <dt>Grant types</dt>
          <dd>{(app.grant_types ?? []).join(', ') || '—'}</dd>
        </div>
      </dl>
      {secret && <SecretOnce label="Client secret" value={secret} />}
      <DetailTabs
        label="Parts of this application"
        tabs={[
          machine && {
            id: 'quick-start',
            label: 'Quick start',
            content: <MachineQuickStart api={api} app={app} domain={domain} {...((rotated ?? secret) !== undefined && { secret: rotated ?? secret })} />,
          },
          {
            id: 'settings',
            label: 'Settings',
            content: (
              <form className="card" onSubmit={save} aria-labelledby="settings">
                <h2 id="settings">Settings</h2>
                <div className="field">
                  <label htmlFor="name">Name</label>
                  <input id="name" required maxLength={128} value={draft.name} onChange={(e) => setDraft({ ...draft, name: e.target.value })} />
                </div>
                <div className="field">
                  <label htmlFor="description">Description</label>
                  <input id="description" maxLength={140} value={draft.description} onChange={(e) => setDraft({ ...draft, description: e.target.value })} />
                </div>
                {!machine && (
                  <>
                  <UrlList id="callbacks" label="Allowed callback URLs" hint="One a line. Where the login may send the browser back with the result." value={draft.callbacks} onChange={set('callbacks')} />
                  <UrlList id="logout-urls" label="Allowed logout URLs" hint="One a line. Where /v2/logout may return to." value={draft.allowed_logout_urls} onChange={set('allowed_logout_urls')} />
                  <UrlList id="web-origins" label="Allowed web origins" hint="One a line (scheme://host:port). Silent sign-in and web_message answer these." value={draft.web_origins} onChange={set('web_origins')} />
                  <UrlList id="allowed-origins" label="Allowed origins (CORS)" hint="One a line. Browsers on these origins may call the authentication API." value={draft.allowed_origins} onChange={set('allowed_origins')} />
                  </>
                )}
                <fieldset>
                  <legend>Grant types</legend>
                  <div className="choices">
                    {GRANT_TYPES.map(([value, label]) => (
                      <label className="check" key={value}>
                        <input
                          type="checkbox"
                          checked={draft.grant_types.includes(value)}
                          onChange={() => setDraft({ ...draft, grant_types: draft.grant_types.includes(value) ? draft.grant_types.filter((g) => g !== value) : [...draft.grant_types, value] })}
                        />
                        {label}
                      </label>
                    ))}
                  </div>
                </fieldset>
                <ErrorNotice message={error} />
                {saved && <Notice>Saved.</Notice>}
                <div className="actions">
                  <button type="submit" className="primary">
                    Save changes
                  </button>
                </div>
              </form>
            ),
          },
          !machine && { id: 'connections', label: 'Connections', content: <AppConnections api={api} app={app} /> },
          !machine && { id: 'test-login', label: 'Test login', content: <TestLogin app={app} domain={domain} onAllowed={loaded.reload} api={api} /> },
          !machine &&
            app.grant_types?.includes('client_credentials') === true && {
              id: 'api-access',
              label: 'API access',
              content: (
                <section className="card" aria-labelledby="api-access">
                  <h2 id="api-access">API access</h2>
                  <p>The APIs this application may get tokens for with its own credentials (client_credentials).</p>
                  <ClientGrants api={api} app={app} />
                </section>
              ),
            },
          confidential && {
            id: 'credentials',
            label: 'Credentials',
            content: (
              <section className="card" aria-labelledby="credentials">
                <h2 id="credentials">Credentials</h2>
                <p>
                  The application authenticates with <code>{app.token_endpoint_auth_method}</code>. The secret is never shown again after it is made, nor kept by the console. Rotating makes a new one; the old one stops working at once.
                </p>
                <ConfirmButton
                  label="Rotate secret"
                  question={`Rotate the secret of ${app.name}? Every service using the current secret will fail until it has the new one.`}
                  confirmLabel="Rotate"
                  danger
                  onConfirm={async () => {
                    setRotateError(undefined);
                    try {
                      const answer = await api.request<Application>('POST', `/clients/${encodeURIComponent(id)}/rotate-secret`);
                      setRotated(answer.client_secret);
                    } catch (err) {
                      setRotateError(messageOf(err));
                    }
                  }}
                />
                <ErrorNotice message={rotateError} />
                {rotated && <SecretOnce label="New client secret" value={rotated} />}
              </section>
            ),
          },
        ]}
      />
    </>
  );
}

/** One application: its client id, name and URLs (saved with PATCH), the secret rotated and shown once. */
import { useEffect, useState, type FormEvent } from 'react';
import { messageOf, type ManagementApi } from '../api.js';
import { href } from '../router.js';
import { ConfirmButton, ErrorNotice, Notice, SecretOnce, UrlList, urls, useLoad } from '../ui.js';
import { APP_TYPES, createdSecrets, type Application } from './Applications.js';

interface Draft {
  name: string;
  callbacks: string[];
  allowed_logout_urls: string[];
  web_origins: string[];
  allowed_origins: string[];
}

function draftOf(app: Application): Draft {
  return {
    name: app.name,
    callbacks: app.callbacks ?? [],
    allowed_logout_urls: app.allowed_logout_urls ?? [],
    web_origins: app.web_origins ?? [],
    allowed_origins: app.allowed_origins ?? [],
  };
}

export function ApplicationDetail({ api, id }: { api: ManagementApi; id: string }) {
  const loaded = useLoad(() => api.get<Application>(`/clients/${encodeURIComponent(id)}`), [id]);
  const [draft, setDraft] = useState<Draft>();
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState(false);
  const [secret, setSecret] = useState<string | undefined>(() => createdSecrets.get(id));
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

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    setSaved(false);
    try {
      await api.request('PATCH', `/clients/${encodeURIComponent(id)}`, {
        name: draft.name.trim(),
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
      <form className="card" onSubmit={save} aria-labelledby="settings">
        <h2 id="settings">Settings</h2>
        <div className="field">
          <label htmlFor="name">Name</label>
          <input id="name" required maxLength={128} value={draft.name} onChange={(e) => setDraft({ ...draft, name: e.target.value })} />
        </div>
        <UrlList id="callbacks" label="Allowed callback URLs" hint="One a line. Where the login may send the browser back with the result." value={draft.callbacks} onChange={set('callbacks')} />
        <UrlList id="logout-urls" label="Allowed logout URLs" hint="One a line. Where /v2/logout may return to." value={draft.allowed_logout_urls} onChange={set('allowed_logout_urls')} />
        <UrlList id="web-origins" label="Allowed web origins" hint="One a line (scheme://host:port). Silent sign-in and web_message answer these." value={draft.web_origins} onChange={set('web_origins')} />
        <UrlList id="allowed-origins" label="Allowed origins (CORS)" hint="One a line. Browsers on these origins may call the authentication API." value={draft.allowed_origins} onChange={set('allowed_origins')} />
        <ErrorNotice message={error} />
        {saved && <Notice>Saved.</Notice>}
        <div className="actions">
          <button type="submit" className="primary">
            Save changes
          </button>
        </div>
      </form>
      {confidential && (
        <section className="card" aria-labelledby="credentials">
          <h2 id="credentials">Credentials</h2>
          <p>The secret is never shown again after it is made. Rotating makes a new one; the old one stops working at once.</p>
          <ConfirmButton
            label="Rotate secret"
            question={`Rotate the secret of ${app.name}? Every service using the current secret will fail until it has the new one.`}
            confirmLabel="Rotate"
            danger
            onConfirm={async () => {
              try {
                const rotated = await api.request<Application>('POST', `/clients/${encodeURIComponent(id)}/rotate-secret`);
                setSecret(rotated.client_secret);
              } catch (err) {
                setError(messageOf(err));
              }
            }}
          />
        </section>
      )}
    </>
  );
}

/**
 * Connections: where users come from. The list (paged), creating one of any strategy the server offers with
 * that strategy's fields, and one connection's page: its options (secrets write-only: never shown, empty keeps
 * the stored one), the applications it is enabled for, and deleting it with its users.
 */
import { useEffect, useState } from 'react';
import { messageOf, type ManagementApi } from '../api.js';
import { DataTable, usePagedList } from '../components/DataTable.js';
import { CheckField, SelectField, TextArea, TextField } from '../components/fields.js';
import { SwitchField } from '../components/SwitchField.js';
import { FormCard } from '../components/FormCard.js';
import { go, href } from '../router.js';
import { DeleteButton } from '../components/ConfirmButton.js';
import { ErrorNotice, useLoad } from '../ui.js';
import { formValue, optionsToSend, STRATEGIES, strategyInfo, type OptionField, type StrategyInfo } from './connection-strategies.js';

export interface Connection {
  id: string;
  name: string;
  display_name?: string;
  strategy: string;
  options: Record<string, unknown>;
  enabled_clients: string[];
}

interface Client {
  client_id: string;
  name: string;
  app_type?: string;
}

type Values = Record<string, string | boolean>;

const APP_TYPES: Record<string, string> = { spa: 'Single-page', regular_web: 'Regular web', native: 'Native', non_interactive: 'Machine-to-machine' };

/** What a new connection of the strategy starts with in the form (the server's own defaults, shown). */
const STARTING: Record<string, Record<string, unknown>> = {
  auth0: { passwordPolicy: 'good', brute_force_protection: true },
  email: { brute_force_protection: true },
  sms: { brute_force_protection: true, provider: 'twilio' },
  oidc: { type: 'back_channel', scope: 'openid profile email' },
  oauth2: { pkce_enabled: true },
  samlp: { signatureAlgorithm: 'rsa-sha256' },
};

function valuesOf(info: StrategyInfo, options: Record<string, unknown>): Values {
  return Object.fromEntries(info.fields.map((f) => [f.path, formValue(f, options)]));
}

/** One strategy option as a form field. */
function OptionInput({ field, value, onValue, editing }: { field: OptionField; value: string | boolean; onValue: (value: string | boolean) => void; editing: boolean }) {
  const text = typeof value === 'string' ? value : '';
  const secretHint = editing ? 'Write-only: stored, never shown. Leave empty to keep it.' : 'Write-only: it is stored sealed and never shown again.';
  switch (field.kind) {
    case 'check':
      return <SwitchField label={field.label} checked={value === true} onValue={onValue} />;
    case 'select': {
      const choices = field.choices ?? [];
      return <SelectField label={field.label} hint={field.hint} value={text} onValue={onValue} choices={choices.some(([v]) => v === text) ? choices : [['', '(not set)'], ...choices]} />;
    }
    case 'textarea':
    case 'lines':
      return <TextArea label={field.label} hint={field.hint} value={text} onValue={onValue} rows={field.kind === 'lines' ? 2 : 4} />;
    case 'secret-text':
      return <TextArea label={field.label} hint={secretHint} value={text} onValue={onValue} rows={3} />;
    case 'secret':
      return <TextField label={field.label} hint={secretHint} type="password" autoComplete="new-password" required={field.required === true && !editing} value={text} onValue={onValue} />;
    default:
      return (
        <TextField
          label={field.label}
          hint={field.hint}
          type={field.kind === 'number' ? 'number' : field.kind === 'url' ? 'url' : 'text'}
          required={field.required === true}
          value={text}
          onValue={onValue}
        />
      );
  }
}

function OptionFields({ info, values, setValues, editing }: { info: StrategyInfo; values: Values; setValues: (values: Values) => void; editing: boolean }) {
  const checks = info.fields.filter((f) => f.kind === 'check');
  return (
    <>
      <div className="fields-grid">
        {info.fields
          .filter((f) => f.kind !== 'check')
          .map((f) => (
            <OptionInput key={f.path} field={f} value={values[f.path] ?? ''} onValue={(v) => setValues({ ...values, [f.path]: v })} editing={editing} />
          ))}
      </div>
      {checks.length > 0 && (
        <fieldset>
          <legend>Options</legend>
          {checks.map((f) => (
            <OptionInput key={f.path} field={f} value={values[f.path] ?? false} onValue={(v) => setValues({ ...values, [f.path]: v })} editing={editing} />
          ))}
        </fieldset>
      )}
    </>
  );
}

function CreateConnection({ api }: { api: ManagementApi }) {
  const [strategy, setStrategy] = useState('auth0');
  const [name, setName] = useState('');
  const info = strategyInfo(strategy) ?? STRATEGIES[0]!;
  const [values, setValues] = useState<Values>(() => valuesOf(info, STARTING.auth0 ?? {}));
  const choose = (next: string) => {
    setStrategy(next);
    const nextInfo = strategyInfo(next);
    if (nextInfo) setValues(valuesOf(nextInfo, STARTING[next] ?? {}));
  };
  const families = [...new Set(STRATEGIES.map((s) => s.family))];
  return (
    <FormCard
      title="Create a connection"
      submitLabel="Create connection"
      testId="create-connection"
      folded
      onSubmit={async () => {
        const created = await api.request<Connection>('POST', '/connections', { name: name.trim(), strategy, options: optionsToSend(info.fields, {}, values) });
        go('connections', created.id);
      }}
    >
      <div className="row by-label">
        <div className="field grow">
          <label htmlFor="connection-strategy">Type</label>
          <select id="connection-strategy" value={strategy} onChange={(e) => choose(e.target.value)}>
            {families.map((family) => (
              <optgroup key={family} label={family}>
                {STRATEGIES.filter((s) => s.family === family).map((s) => (
                  <option key={s.strategy} value={s.strategy}>
                    {s.label}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </div>
        <TextField
          grow
          label="Name"
          required
          maxLength={128}
          pattern="[a-zA-Z0-9](-?[a-zA-Z0-9])*"
          hint="Letters, digits and single hyphens; it cannot be changed later."
          value={name}
          onValue={setName}
        />
      </div>
      <OptionFields info={info} values={values} setValues={setValues} editing={false} />
    </FormCard>
  );
}

export function Connections({ api }: { api: ManagementApi }) {
  const paged = usePagedList<Connection>(api, '/connections', 'connections');
  return (
    <>
      <h1>Connections</h1>
      <p className="lead">Where people sign in from: a database of passwords, passwordless codes, or another identity provider.</p>
      <CreateConnection api={api} />
      <DataTable
        caption="Connections of this tenant"
        paged={paged}
        rowKey={(c) => c.id}
        empty="No connections yet."
        columns={[
          { label: 'Name', cell: (c) => <a href={href('connections', c.id)}>{c.name}</a> },
          { label: 'Type', cell: (c) => strategyInfo(c.strategy)?.label ?? c.strategy },
          { label: 'Applications', cell: (c) => c.enabled_clients.length },
        ]}
      />
    </>
  );
}

/**
 * Which applications may use the connection: their list paged, each a switch (PATCH /connections/{id}/clients).
 * Not the global client ("All Applications"): nobody signs in to it.
 */
function EnabledApplications({ api, connection, onChange }: { api: ManagementApi; connection: Connection; onChange: () => void }) {
  const paged = usePagedList<Client>(api, '/clients', 'clients', 20, { fields: 'client_id,name,app_type', include_fields: 'true', is_global: 'false' });
  const [error, setError] = useState<string>();
  // A switch shows its new state at once; it goes back if the API refuses.
  const [switched, setSwitched] = useState<Record<string, boolean>>({});
  const enabled = (clientId: string) => switched[clientId] ?? connection.enabled_clients.includes(clientId);
  const toggle = async (client: Client, on: boolean) => {
    setError(undefined);
    setSwitched((s) => ({ ...s, [client.client_id]: on }));
    try {
      await api.request('PATCH', `/connections/${encodeURIComponent(connection.id)}/clients`, [{ client_id: client.client_id, status: on }]);
      onChange();
    } catch (err) {
      setSwitched(({ [client.client_id]: _dropped, ...rest }) => rest);
      setError(messageOf(err));
    }
  };
  return (
    <section className="card" aria-labelledby="connection-apps">
      <h2 id="connection-apps">Applications</h2>
      <p>People can sign in with this connection to the applications it is enabled for.</p>
      <ErrorNotice message={error} />
      <DataTable
        caption="Applications and whether this connection is enabled for them"
        paged={paged}
        rowKey={(c) => c.client_id}
        empty="No applications yet."
        columns={[
          { label: 'Application', cell: (c) => <CheckField label={c.name} checked={enabled(c.client_id)} onValue={(on) => void toggle(c, on)} /> },
          { label: 'Type', cell: (c) => (c.app_type ? (APP_TYPES[c.app_type] ?? c.app_type) : '—') },
        ]}
      />
    </section>
  );
}

export function ConnectionDetail({ api, id }: { api: ManagementApi; id: string }) {
  const path = `/connections/${encodeURIComponent(id)}`;
  const loaded = useLoad(() => api.get<Connection>(path), [id]);
  const [values, setValues] = useState<Values>({});
  const [displayName, setDisplayName] = useState('');
  const [error, setError] = useState<string>();
  const connection = loaded.data;
  const info = connection ? strategyInfo(connection.strategy) : undefined;
  useEffect(() => {
    if (!connection || !info) return;
    setValues(valuesOf(info, connection.options));
    setDisplayName(connection.display_name ?? '');
  }, [connection]);
  if (loaded.error && !connection) return <ErrorNotice message={loaded.error} />;
  if (!connection) return <p className="loading">Loading…</p>;
  return (
    <>
      <p className="crumbs">
        <a href={href('connections')}>Connections</a> /
      </p>
      <h1>{connection.name}</h1>
      <dl className="facts">
        <div>
          <dt>Type</dt>
          <dd>{info?.label ?? connection.strategy}</dd>
        </div>
        <div>
          <dt>ID</dt>
          <dd>
            <code data-testid="connection-id">{connection.id}</code>
          </dd>
        </div>
      </dl>
      <FormCard
        title="Settings"
        submitLabel="Save changes"
        testId="connection-settings"
        onSubmit={async () => {
          loaded.show(
            await api.request<Connection>('PATCH', path, {
              display_name: displayName.trim(),
              options: info ? optionsToSend(info.fields, connection.options, values) : connection.options,
            }),
          );
          return 'Saved.';
        }}
      >
        <TextField label="Display name" hint="Shown on the login button." maxLength={128} value={displayName} onValue={setDisplayName} />
        {info ? <OptionFields info={info} values={values} setValues={setValues} editing /> : <p>This console has no form for the strategy {connection.strategy}; edit it through the Management API.</p>}
      </FormCard>
      <EnabledApplications api={api} connection={connection} onChange={loaded.reload} />
      <section className="card" aria-labelledby="connection-danger">
        <h2 id="connection-danger">Delete</h2>
        <p>Deleting the connection deletes its users too.</p>
        <ErrorNotice message={error} />
        <DeleteButton api={api} path={path} label="Delete connection" question={`Delete ${connection.name} and every user in it? This cannot be undone.`} confirmLabel="Delete" then={() => go('connections')} onError={setError} />
      </section>
    </>
  );
}

/**
 * Event streams: the list, creating one to a webhook URL, and one stream's page: the test event with its
 * delivery record explained, the last day's deliveries as a chart, and the failed deliveries with redelivery.
 */
import { useState, type FormEvent } from 'react';
import { messageOf, type ManagementApi } from '../api.js';
import { go, href } from '../router.js';
import { ConfirmButton } from '../components/ConfirmButton.js';
import { Choices, TextField } from '../components/fields.js';
import { FormCard } from '../components/FormCard.js';
import { ErrorNotice, useLoad } from '../ui.js';
import { StreamDeliveries, type Delivery, type Stream } from './Deliveries.js';

/** The contract's event types (the API checks them; this list only fills the choices). */
export const EVENT_TYPES = [
  'user.created',
  'user.updated',
  'user.deleted',
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'organization.member.added',
  'organization.member.deleted',
  'organization.member.role.assigned',
  'organization.member.role.deleted',
  'organization.connection.added',
  'organization.connection.updated',
  'organization.connection.removed',
  'organization.group.role.assigned',
  'organization.group.role.deleted',
  'group.created',
  'group.updated',
  'group.deleted',
  'group.member.added',
  'group.member.deleted',
  'group.role.assigned',
  'group.role.deleted',
];

interface Stats {
  buckets: string[];
  metrics: { name: string; window_total: number; data: number[] }[];
}

function CreateStream({ api }: { api: ManagementApi }) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [token, setToken] = useState('');
  const [types, setTypes] = useState<string[]>(['user.created', 'user.updated', 'user.deleted']);
  return (
    <FormCard
      title="Create an event stream"
      submitLabel="Create stream"
      onSubmit={async () => {
        const created = await api.request<Stream>('POST', '/event-streams', {
          name: name.trim(),
          subscriptions: types.map((event_type) => ({ event_type })),
          destination: { type: 'webhook', configuration: { webhook_endpoint: url.trim(), webhook_authorization: { method: 'bearer', token } } },
        });
        go('event-streams', created.id);
      }}
    >
      <div className="row by-label">
        <TextField grow label="Name" required maxLength={128} value={name} onValue={setName} />
        <TextField grow label="Webhook URL" type="url" required placeholder="https://hooks.example.com/gatehouse" value={url} onValue={setUrl} />
        <TextField
          grow
          label="Bearer token"
          hint="Sent as Authorization: Bearer with every event, so your receiver knows it is us. Write-only."
          type="password"
          required
          autoComplete="off"
          value={token}
          onValue={setToken}
        />
      </div>
      <Choices legend="Events" options={EVENT_TYPES.map((type) => [type, type] as const)} value={types} onValue={setTypes} />
    </FormCard>
  );
}

export function EventStreams({ api }: { api: ManagementApi }) {
  const streams = useLoad(() => api.get<{ eventStreams: Stream[] }>('/event-streams?take=100'), []);
  return (
    <>
      <h1>Event streams</h1>
      <p className="lead">Each stream sends this tenant's events (CloudEvents) to a webhook, retrying failures; what still fails waits here to be redelivered.</p>
      <p>
        <a href={href('deliveries')}>Failed deliveries of every stream</a>
      </p>
      <CreateStream api={api} />
      <ErrorNotice message={streams.error} />
      <table>
        <caption className="visually-hidden">Event streams</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Webhook</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {streams.data?.eventStreams.map((s) => (
            <tr key={s.id}>
              <td data-label="Name">
                <a href={href('event-streams', s.id)}>{s.name}</a>
              </td>
              <td data-label="Webhook">
                <code>{s.destination?.configuration?.webhook_endpoint ?? '—'}</code>
              </td>
              <td data-label="Status">{s.status === 'enabled' ? <span className="badge">Enabled</span> : <span className="badge problem">{s.status}</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {streams.data?.eventStreams.length === 0 && <p>No event streams yet.</p>}
      {streams.loading && !streams.data && <p className="loading">Loading…</p>}
    </>
  );
}

/** The record POST /test answers, read as the API documents it: no error_message and no event = delivered. */
function TestRecord({ record }: { record: Delivery & { event?: unknown } }) {
  const attempt = record.attempts[0];
  const delivered = !attempt?.error_message && !record.event;
  return (
    <div className={delivered ? 'notice' : 'notice problem'} role="status" data-testid="test-record">
      <p>
        <strong>{delivered ? 'Delivered.' : 'Not delivered.'}</strong>{' '}
        {delivered
          ? `Your receiver accepted the test ${record.event_type} event (one attempt, ${attempt ? new Date(attempt.timestamp).toLocaleTimeString() : ''}).`
          : `The one attempt failed: ${attempt?.error_message ?? 'no answer'}.`}
      </p>
      <p className="small">
        A test is sent once, is not retried and is not kept: its record's <code>status</code> always reads “failed”; the attempt's error message is what
        tells.
      </p>
    </div>
  );
}

function StatsChart({ stats }: { stats: Stats }) {
  const ok = stats.metrics.find((m) => m.name === 'successful_deliveries');
  const failed = stats.metrics.find((m) => m.name === 'failed_deliveries');
  const okData = ok?.data ?? [];
  const failedData = failed?.data ?? [];
  const max = Math.max(1, ...okData.map((n, i) => n + (failedData[i] ?? 0)));
  const width = 4 * Math.max(1, stats.buckets.length);
  const summary = `Last 24 hours: ${ok?.window_total ?? 0} delivered, ${failed?.window_total ?? 0} failed.`;
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${width} 40`} preserveAspectRatio="none" role="img" aria-label={summary}>
        {stats.buckets.map((bucket, i) => {
          const good = ((okData[i] ?? 0) / max) * 40;
          const bad = ((failedData[i] ?? 0) / max) * 40;
          return (
            <g key={bucket}>
              <rect className="ok" x={i * 4} y={40 - good} width={3} height={good} />
              <rect className="bad" x={i * 4} y={40 - good - bad} width={3} height={bad} />
            </g>
          );
        })}
      </svg>
      <div className="axis" aria-hidden="true">
        <span>24 h ago</span>
        <span>now</span>
      </div>
      <figcaption>
        {summary} <span className="legend ok">Delivered</span> <span className="legend bad">Failed</span>
      </figcaption>
    </figure>
  );
}

export function StreamDetail({ api, id }: { api: ManagementApi; id: string }) {
  const base = `/event-streams/${encodeURIComponent(id)}`;
  const loaded = useLoad(() => api.get<Stream>(base), [id]);
  const stats = useLoad(() => api.get<Stats>(`${base}/stats`), [id]);
  const [eventType, setEventType] = useState('user.created');
  const [record, setRecord] = useState<Delivery & { event?: unknown }>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [round, setRound] = useState(0);
  const stream = loaded.data;
  if (loaded.error) return <ErrorNotice message={loaded.error} />;
  if (!stream) return <p className="loading">Loading…</p>;

  const sendTest = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setRecord(undefined);
    try {
      setRecord(await api.request<Delivery & { event?: unknown }>('POST', `${base}/test`, { event_type: eventType }));
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  const setStatus = async (status: string) => {
    setError(undefined);
    try {
      loaded.show(await api.request<Stream>('PATCH', base, { status }));
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <>
      <p className="crumbs">
        <a href={href('event-streams')}>Event streams</a> /
      </p>
      <h1>{stream.name}</h1>
      <dl className="facts">
        <div>
          <dt>Webhook</dt>
          <dd>
            <code>{stream.destination?.configuration?.webhook_endpoint}</code>
          </dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd data-testid="stream-status">{stream.status}</dd>
        </div>
        <div>
          <dt>Events</dt>
          <dd>{stream.subscriptions?.map((s) => s.event_type).join(', ')}</dd>
        </div>
      </dl>
      <ErrorNotice message={error} />
      <form className="card" onSubmit={sendTest} aria-labelledby="test-event">
        <h2 id="test-event">Send a test event</h2>
        <div className="row">
          <div className="field grow">
            <label htmlFor="test-type">Event type</label>
            <select id="test-type" value={eventType} onChange={(e) => setEventType(e.target.value)}>
              {EVENT_TYPES.map((type) => (
                <option key={type}>{type}</option>
              ))}
            </select>
          </div>
          <button type="submit" className="primary" disabled={busy}>
            Send test event
          </button>
        </div>
        {record && <TestRecord record={record} />}
      </form>
      <section className="card" aria-labelledby="stats">
        <h2 id="stats">Deliveries</h2>
        <ErrorNotice message={stats.error} />
        {stats.data && <StatsChart stats={stats.data} />}
        <div className="actions">
          <button
            type="button"
            onClick={() => {
              stats.reload();
              setRound(round + 1);
            }}
          >
            Refresh
          </button>
        </div>
      </section>
      <StreamDeliveries key={round} api={api} stream={stream} heading="Failed deliveries" />
      <section className="card" aria-labelledby="stream-danger">
        <h2 id="stream-danger">Stop or delete</h2>
        <div className="actions">
          {stream.status === 'enabled' ? (
            <button type="button" onClick={() => void setStatus('disabled')}>
              Disable
            </button>
          ) : (
            <button type="button" onClick={() => void setStatus('enabled')}>
              Enable
            </button>
          )}
          <ConfirmButton
            label="Delete stream"
            question={`Delete ${stream.name}? Its failed deliveries are deleted with it.`}
            confirmLabel="Delete"
            danger
            onConfirm={async () => {
              try {
                await api.request('DELETE', base);
                go('event-streams');
              } catch (err) {
                setError(messageOf(err));
              }
            }}
          />
        </div>
      </section>
    </>
  );
}

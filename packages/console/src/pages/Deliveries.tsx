/** Event streams' failed deliveries: per stream, the failed ones with their attempts' errors, and redelivery. */
import { useState } from 'react';
import { messageOf, type ManagementApi } from '../api.js';
import { href } from '../router.js';
import { ErrorNotice, Notice, useLoad } from '../ui.js';

export interface Stream {
  id: string;
  name: string;
  status: string;
  subscriptions?: { event_type: string }[];
  destination?: { type?: string; configuration?: { webhook_endpoint?: string } };
}

export interface Delivery {
  id: string;
  event_type: string;
  attempts: { status: string; timestamp: string; error_message?: string }[];
}

const TAKE = 20;

/** One stream's failed deliveries; `heading` replaces the stream's name (on the stream's own page). */
export function StreamDeliveries({ api, stream, heading }: { api: ManagementApi; stream: Stream; heading?: string }) {
  const [cursor, setCursor] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<string>();
  const base = `/event-streams/${encodeURIComponent(stream.id)}`;
  const list = useLoad(
    () => api.get<{ deliveries: Delivery[]; next?: string }>(`${base}/deliveries?${new URLSearchParams({ statuses: 'failed', take: String(TAKE), ...(cursor && { from: cursor }) })}`),
    [stream.id, cursor],
  );
  const redeliver = async (delivery?: Delivery) => {
    setError(undefined);
    try {
      if (delivery) await api.request('POST', `${base}/redeliver/${encodeURIComponent(delivery.id)}`);
      else await api.request('POST', `${base}/redeliver`, {});
      setNotice(delivery ? `Queued ${delivery.event_type} for delivery again.` : 'Queued every failed delivery again.');
      list.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const deliveries = list.data?.deliveries ?? [];
  return (
    <section className="card" aria-labelledby={`stream-${stream.id}`}>
      <h2 id={`stream-${stream.id}`}>{heading ?? <a href={href('event-streams', stream.id)}>{stream.name}</a>}</h2>
      {!heading && (
        <p className="muted">
          {stream.destination?.configuration?.webhook_endpoint ?? stream.destination?.type} · {stream.status}
        </p>
      )}
      <ErrorNotice message={list.error ?? error} />
      {notice && <Notice>{notice}</Notice>}
      {deliveries.length === 0 && list.data && <p>No failed deliveries.</p>}
      {deliveries.length > 0 && (
        <>
          <table>
            <caption className="visually-hidden">Failed deliveries of {stream.name}</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Last attempt</th>
                <th scope="col">Error</th>
                <th scope="col">
                  <span className="visually-hidden">Action</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => {
                const last = d.attempts[d.attempts.length - 1];
                return (
                  <tr key={d.id}>
                    <td data-label="Event">
                      {d.event_type}
                      <br />
                      <code className="muted">{d.id}</code>
                    </td>
                    <td data-label="Last attempt">
                      {last ? new Date(last.timestamp).toLocaleString() : '—'} ({d.attempts.length} attempt{d.attempts.length === 1 ? '' : 's'})
                    </td>
                    <td data-label="Error">{last?.error_message ?? '—'}</td>
                    <td>
                      <button type="button" onClick={() => redeliver(d)}>
                        Redeliver
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <div className="actions">
            <button type="button" onClick={() => redeliver()}>
              Redeliver all failed
            </button>
            {cursor && (
              <button type="button" onClick={() => setCursor(undefined)}>
                First page
              </button>
            )}
            {list.data?.next && (
              <button type="button" onClick={() => setCursor(list.data?.next)}>
                Next page
              </button>
            )}
          </div>
        </>
      )}
    </section>
  );
}

export function Deliveries({ api }: { api: ManagementApi }) {
  const streams = useLoad(() => api.get<{ eventStreams: Stream[] }>('/event-streams?take=100'), []);
  return (
    <>
      <p className="crumbs">
        <a href={href('event-streams')}>Event streams</a> /
      </p>
      <h1>Failed deliveries</h1>
      <p className="lead">Events an event stream could not deliver: refused by the receiver, or still failing after the retries. Fix the receiver, then redeliver.</p>
      <ErrorNotice message={streams.error} />
      {streams.data?.eventStreams.length === 0 && <p>No event streams yet.</p>}
      {streams.data?.eventStreams.map((stream) => <StreamDeliveries key={stream.id} api={api} stream={stream} />)}
    </>
  );
}

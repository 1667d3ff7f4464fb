/**
 * The process's Prometheus series (prom-client), and the few calls the flows make to move them. Counters and
 * histograms live in one registry per process, whatever number of apps it runs (tests start several); the
 * series read from storage at scrape time (backlogs, pool) are per app (metrics/endpoint.ts).
 *
 * Labels are bounded: route templates (never raw paths), status codes, grant types, log event codes and
 * connection names, which the tenant configures and which are few.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { argon2Queue } from '../crypto/passwords.js';

export const processRegistry = new Registry();
collectDefaultMetrics({ register: processRegistry, prefix: 'gatehouse_' });

const httpRequests = new Counter({
  name: 'gatehouse_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  registers: [processRegistry],
});

const httpDuration = new Histogram({
  name: 'gatehouse_http_request_duration_seconds',
  help: 'Time from a request arriving to its response being sent, by method, route template and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [processRegistry],
});

const rateLimited = new Counter({
  name: 'gatehouse_rate_limit_refusals_total',
  help: 'Requests refused with 429, by route template',
  labelNames: ['route'] as const,
  registers: [processRegistry],
});

const logins = new Counter({
  name: 'gatehouse_login_outcomes_total',
  help: 'Sign-in outcomes by tenant log event code (s, f, fp, fu, …) and connection',
  labelNames: ['outcome', 'type', 'connection'] as const,
  registers: [processRegistry],
});

const tokens = new Counter({
  name: 'gatehouse_tokens_issued_total',
  help: 'Successful POST /oauth/token exchanges by grant type',
  labelNames: ['grant_type'] as const,
  registers: [processRegistry],
});

const tokenFailures = new Counter({
  name: 'gatehouse_token_failures_total',
  help: 'Failed POST /oauth/token exchanges by grant type',
  labelNames: ['grant_type'] as const,
  registers: [processRegistry],
});

const eventDeliveryFailures = new Counter({
  name: 'gatehouse_event_stream_delivery_failures_total',
  help: 'Failed event stream delivery attempts',
  registers: [processRegistry],
});

const eventDeliveries = new Counter({
  name: 'gatehouse_event_stream_deliveries_total',
  help: 'Events delivered to event streams',
  registers: [processRegistry],
});

const logStreamFailures = new Counter({
  name: 'gatehouse_log_stream_delivery_failures_total',
  help: 'Failed log stream batch deliveries',
  registers: [processRegistry],
});

const logStreamDelivered = new Counter({
  name: 'gatehouse_log_stream_logs_delivered_total',
  help: 'Log events delivered to log streams',
  registers: [processRegistry],
});

const emailFailures = new Counter({
  name: 'gatehouse_email_send_failures_total',
  help: 'Failed SMTP sends (each attempt)',
  registers: [processRegistry],
});

// Process-wide, like the slots they describe (crypto/passwords.ts): a backlog here is logins waiting on CPU.
new Gauge({
  name: 'gatehouse_password_hash_queue_depth',
  help: 'Argon2 password hashes and verifications waiting for a slot (one slot per CPU)',
  registers: [processRegistry],
  collect() {
    this.set(argon2Queue().waiting);
  },
});
new Gauge({
  name: 'gatehouse_password_hash_running',
  help: 'Argon2 password hashes and verifications running',
  registers: [processRegistry],
  collect() {
    this.set(argon2Queue().running);
  },
});

const LOGIN_SUCCESS = new Set(['s']);
const LOGIN_FAILURE = new Set(['f', 'fp', 'fu', 'limit_wc', 'limit_mu']);

/** What the flows call; each a counter increment, nothing more. */
export const observe = {
  request(method: string, route: string, statusCode: number, seconds: number): void {
    const labels = { method, route, status_code: String(statusCode) };
    httpRequests.inc(labels);
    httpDuration.observe(labels, seconds);
    if (statusCode === 429) rateLimited.inc({ route });
  },
  /** Every tenant log event passes here; the sign-in outcomes among them are counted. */
  logEvent(type: string, connection: string | null): void {
    const outcome = LOGIN_SUCCESS.has(type) ? 'success' : LOGIN_FAILURE.has(type) ? 'failure' : undefined;
    if (outcome) logins.inc({ outcome, type, connection: connection ?? '' });
  },
  tokenExchange(grantType: string, ok: boolean): void {
    (ok ? tokens : tokenFailures).inc({ grant_type: grantType });
  },
  eventDelivered(): void {
    eventDeliveries.inc();
  },
  eventDeliveryFailed(): void {
    eventDeliveryFailures.inc();
  },
  logStreamDelivered(logs: number): void {
    logStreamDelivered.inc(logs);
  },
  logStreamDeliveryFailed(): void {
    logStreamFailures.inc();
  },
  emailFailed(): void {
    emailFailures.inc();
  },
};

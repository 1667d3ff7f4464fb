/**
 * OpenTelemetry traces, only when OTEL_EXPORTER_OTLP_ENDPOINT is set: one server span per request (named by its
 * route template) and, under it, one span per database query (the SQL text with its placeholders, never the
 * values), exported over OTLP/HTTP (JSON) to `<endpoint>/v1/traces` in batches. Without the variable none of
 * this is loaded into the request path: no hook, no query observer, no provider (the zero cost the issue asks).
 *
 * The official packages: @opentelemetry/api, the SDK's TracerProvider and BatchSpanProcessor, the OTLP/HTTP
 * exporter, and AsyncLocalStorage context so that a query's span finds the request it runs for.
 */
import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Context propagation is process-wide; installed once, by the first server that traces. */
let contextInstalled = false;

const spans = new WeakMap<FastifyRequest, Span>();

export class Tracing {
  readonly #provider: TracerProvider;
  readonly #tracer: Tracer;
  readonly #dialect: string;

  constructor(endpoint: string, dialect: string, serviceName = 'gatehouse') {
    if (!contextInstalled) {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      contextInstalled = true;
    }
    const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });
    this.#provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': serviceName }),
      spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 1000 })],
    });
    this.#tracer = this.#provider.getTracer('gatehouse');
    this.#dialect = dialect;
  }

  /** A finished query, as the store saw it: a span ending now, under the request it ran for (if any). */
  query(sqlText: string, durationMs: number): void {
    const end = Date.now();
    const verb = /^\s*(\w+)/.exec(sqlText)?.[1]?.toLowerCase() ?? 'query';
    this.#tracer
      .startSpan(`db ${verb}`, { kind: SpanKind.CLIENT, startTime: end - durationMs, attributes: { 'db.system.name': this.#dialect === 'postgres' ? 'postgresql' : 'sqlite', 'db.query.text': sqlText.slice(0, 2000) } }, context.active())
      .end(end);
  }

  /** Server spans for every request of `app`; the rest of the request runs in the span's context. */
  instrument(app: FastifyInstance): void {
    app.addHook('onRequest', (request, _reply, done) => {
      const route = request.routeOptions.url ?? 'unmatched';
      const span = this.#tracer.startSpan(`${request.method} ${route}`, {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': request.method, 'http.route': route, 'url.path': request.url.split('?')[0]!.slice(0, 500) },
      });
      spans.set(request, span);
      context.with(trace.setSpan(context.active(), span), done);
    });
    app.addHook('onResponse', async (request, reply) => {
      const span = spans.get(request);
      if (!span) return;
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
  }

  /** Sends what is buffered (tests, and before stopping). */
  flush(): Promise<void> {
    return this.#provider.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#provider.shutdown();
  }
}

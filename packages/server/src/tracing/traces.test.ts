/**
 * Traces over real HTTP: a server with OTEL_EXPORTER_OTLP_ENDPOINT sends OTLP/HTTP JSON to a collector stand-in
 * (a local HTTP server that records /v1/traces); a Management API request arrives as a server span named by its
 * route template, with its database queries as child spans in the same trace, their SQL carrying placeholders
 * and never the values. A server without the variable has no tracing at all.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}
interface OtlpExport {
  resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

describe('OpenTelemetry traces', () => {
  const exports: { path: string; contentType: string; body: OtlpExport }[] = [];
  let collector: http.Server;
  let server: TestServer;
  let untraced: TestServer;

  beforeAll(async () => {
    collector = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        exports.push({ path: req.url ?? '', contentType: String(req.headers['content-type']), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    server = await startTestServer({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } });
    untraced = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
    await untraced?.close();
    await new Promise<void>((resolve) => collector.close(() => resolve()));
  });

  it('exports a request span with its database queries as children', async () => {
    const token = await managementToken(server);
    const res = await fetch(`${server.url}/api/v2/users?q=${encodeURIComponent('email:"secret-value@example.com"')}&search_engine=v3`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const spansNow = () => exports.flatMap((e) => e.body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
    await expect
      .poll(
        async () => {
          await server.server.prepared.tracing!.flush();
          return spansNow().some((s) => s.name === 'GET /api/v2/users');
        },
        { timeout: 20_000, interval: 200 },
      )
      .toBe(true);
    expect(exports[0]!.path).toBe('/v1/traces');
    expect(exports[0]!.contentType).toMatch(/^application\/json/);
    const service = exports[0]!.body.resourceSpans[0]!.resource.attributes.find((a) => a.key === 'service.name');
    expect(service?.value.stringValue).toBe('gatehouse');

    const spans = spansNow();
    const request = spans.find((s) => s.name === 'GET /api/v2/users')!;
    expect(request.kind).toBe(2); // SERVER
    const attribute = (span: OtlpSpan, key: string) => span.attributes.find((a) => a.key === key)?.value;
    expect(attribute(request, 'http.route')?.stringValue).toBe('/api/v2/users');
    expect(Number(attribute(request, 'http.response.status_code')?.intValue)).toBe(200);
    const queries = spans.filter((s) => s.traceId === request.traceId && s.parentSpanId === request.spanId && s.name.startsWith('db '));
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.every((q) => attribute(q, 'db.system.name')?.stringValue === 'sqlite')).toBe(true);
    for (const span of spans) expect(JSON.stringify(span)).not.toContain('secret-value@example.com');
  });

  it('is absent when OTEL_EXPORTER_OTLP_ENDPOINT is not set', () => {
    expect(untraced.server.prepared.tracing).toBeUndefined();
    expect(untraced.server.services.tracing).toBeUndefined();
  });
});

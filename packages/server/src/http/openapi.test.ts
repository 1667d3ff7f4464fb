/**
 * Both OpenAPI documents describe every route exactly: every route Fastify registered is documented and nothing
 * else is, and real responses (every documented status of every operation, reached by real requests) have a
 * documented status, media type, body and headers. A route added without its `response` declarations, or one
 * that answers something it does not declare, fails here with the route and the status named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from './rate-limit/buckets.js';
import { UNDOCUMENTED_METHODS } from './openapi.js';
import { updateTenant } from '../store/tenants.js';
import { Conformance, type ObservedResponse, type OpenApiDocument } from '../test-support/openapi-conformance.js';
import {
  createFixtures,
  fillPath,
  MANAGEMENT_EXAMPLES,
  rawRequest,
  recordResponses,
  runAuthenticationFlows,
  runManagementExample,
  startRefusingReceiver,
  type Fixtures,
} from '../test-support/operation-examples.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';

/** Documented statuses no request in this test can produce, each with the reason. */
const NOT_EXERCISED: [RegExp, string][] = [
  [/^GET \/lib\/(\d+\.\d+\.\d+\/)?svc\.m?js 404$/, 'the browser library is always built before the tests run'],
  [/^GET \/console\/ 404$/, 'the console is always built before the tests run'],
  [/^GET \/console\/config\.json 404$/, 'every tenant these tests start has its console client (made at start); another kind of tenant has none until its next start'],
];

const templateOf = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

async function setRateLimits(test: TestServer, limit: { capacity: number; per_second: number }): Promise<void> {
  const { tenant } = test.server.prepared.bootstrap!;
  const rateLimits = Object.fromEntries(Object.keys(DEFAULT_LIMITS).map((bucket) => [bucket, limit]));
  await updateTenant(test.server.prepared.store.db, tenant.id, { settings: { ...tenant.settings, rate_limits: rateLimits } });
}

describe('the OpenAPI documents', () => {
  let test: TestServer;
  let full: OpenApiDocument;
  let management: OpenApiDocument;
  let receiver: Awaited<ReturnType<typeof startRefusingReceiver>>;

  beforeAll(async () => {
    receiver = await startRefusingReceiver();
    test = await startTestServer();
    full = (await (await fetch(`${test.url}/openapi.json`)).json()) as OpenApiDocument;
    management = (await (await fetch(`${test.url}/api/v2/openapi.json`)).json()) as OpenApiDocument;
  });
  afterAll(async () => {
    await test?.close().catch(() => undefined);
    await receiver?.close();
  });

  it('document every registered route and method, and nothing else', () => {
    const registered = new Set(
      test.server.app
        .registeredRoutes()
        .filter((r) => !(UNDOCUMENTED_METHODS as readonly string[]).includes(r.method))
        .map((r) => `${r.method} ${templateOf(r.url)}`),
    );
    const documented = new Set(Object.entries(full.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)));
    const undocumented = [...registered].filter((r) => !documented.has(r));
    const unregistered = [...documented].filter((d) => !registered.has(d));
    expect(undocumented, 'registered but missing from /openapi.json (is the route `hide: true`?)').toEqual([]);
    expect(unregistered, 'documented in /openapi.json but not registered').toEqual([]);

    const managementRoutes = [...registered].filter((r) => r.split(' ')[1]!.startsWith('/api/v2/')).map((r) => r.replace(' /api/v2', ' '));
    const managementDocumented = Object.entries(management.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    expect(managementDocumented.sort()).toEqual(managementRoutes.sort());
  });

  it('give every operation a summary, a success or redirect, and errors in the shape of its family', () => {
    const problems: string[] = [];
    for (const [path, item] of Object.entries(full.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        const responses = operation.responses ?? {};
        if (!operation.summary) problems.push(`${where}: no summary`);
        // A feature we do not offer (management/not-offered.ts) has no success to document: its writes are 501,
        // and its single settings objects 404 (there is none).
        const notOffered = operation.tags?.includes('not offered') && (Object.keys(responses).includes('501') || Object.keys(responses).includes('404'));
        if (!notOffered && !Object.keys(responses).some((s) => /^[23]/.test(s))) problems.push(`${where}: no success or redirect documented (add its 2xx to schema.response)`);
        for (const [status, response] of Object.entries(responses)) {
          if (!response.description || response.description === 'Default Response') problems.push(`${where} ${status}: no description`);
          if (Number(status) < 400) continue;
          const family = path.startsWith('/api/v2/') ? 'ManagementError' : path.startsWith('/dbconnections/') ? 'DbConnectionsError' : 'OAuthError';
          const json = response.content?.['application/json']?.schema as { $ref?: string } | undefined;
          if (json?.$ref !== `#/components/schemas/${family}`) problems.push(`${where} ${status}: the JSON error body is not ${family} (use errorResponses)`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('answer only what they document, and every documented status is reachable', { timeout: 600_000 }, async () => {
    const conformance = new Conformance(full, 'full');
    const managementConformance = new Conformance(management, 'management');
    await setRateLimits(test, { capacity: 100_000, per_second: 100_000 });
    test = await test.restart();
    const recording = recordResponses(test.url);
    const raw: ObservedResponse[] = [];
    let f: Fixtures;
    try {
      f = await createFixtures(test, receiver.url);

      // The Authentication API and the hosted pages, through their flows.
      await runAuthenticationFlows(f);

      // Each Management API operation's own answers, by example.
      const missing = Object.entries(management.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .map((m) => `${m.toUpperCase()} /api/v2${path === '/' ? '' : path}`)
          .filter((op) => !MANAGEMENT_EXAMPLES.some((e) => e.operation === op)),
      );
      expect(missing, 'Management API operations without an example in test-support/operation-examples.ts').toEqual([]);
      for (const example of MANAGEMENT_EXAMPLES) {
        const [method, template] = example.operation.split(' ') as [string, string];
        const operation = full.paths[template]?.[method.toLowerCase()];
        expect(operation, `${example.operation} is not documented`).toBeDefined();
        const success = Object.keys(operation!.responses ?? {}).filter((s) => /^2/.test(s));
        await runManagementExample(f, example, Number(success[0]));
      }

      // What every operation answers whatever it does: malformed input, an unknown tenant, bodies refused,
      // and on the Management API no token or the wrong scopes.
      // A scope no operation accepts (read:stats was one, until /stats came).
      const unrelated = await managementToken(test, ['read:vdcs_templates']);
      for (const [template, item] of Object.entries(full.paths)) {
        for (const method of Object.keys(item).map((m) => m.toUpperCase())) {
          const path = fillPath(template, f);
          const isManagement = template.startsWith('/api/v2/') && template !== '/api/v2/openapi.json';
          const auth: Record<string, string> = isManagement ? { authorization: `Bearer ${f.token}` } : {};
          await fetch(`${test.url}${path}?x=%00`, { method, headers: auth, redirect: 'manual' });
          await rawRequest(test.url, { method, path, headers: { ...auth, host: 'unknown-tenant.invalid' } }, raw);
          if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) {
            const huge = JSON.stringify({ padding: 'x'.repeat(1024 * 1024 + 10) });
            await fetch(`${test.url}${path}`, { method, headers: { ...auth, 'content-type': 'application/json' }, body: huge, redirect: 'manual' });
            await fetch(`${test.url}${path}`, { method, headers: { ...auth, 'content-type': 'text/plain' }, body: 'plain', redirect: 'manual' });
          }
          if (isManagement) {
            await fetch(`${test.url}${path}`, { method, redirect: 'manual' });
            await fetch(`${test.url}${path}`, { method, headers: { authorization: `Bearer ${unrelated}` }, redirect: 'manual' });
          }
        }
      }
    } finally {
      recording.stop();
    }

    // Past the rate limit: one request per bucket and key fits, the next is refused.
    await setRateLimits(test, { capacity: 1, per_second: 0.0001 });
    test = await test.restart();
    const limited = recordResponses(test.url);
    try {
      for (const [template, item] of Object.entries(full.paths)) {
        for (const method of Object.keys(item).map((m) => m.toUpperCase())) {
          if (!item[method.toLowerCase()]?.responses?.['429']) continue;
          const auth: Record<string, string> = template.startsWith('/api/v2/') ? { authorization: `Bearer ${f!.token}` } : {};
          for (let i = 0; i < 2; i++) await fetch(`${test.url}${fillPath(template, f!)}`, { method, headers: auth, redirect: 'manual' });
        }
      }
      // Readiness without its database.
      await test.server.prepared.store.close();
      await fetch(`${test.url}/readyz`);
    } finally {
      limited.stop();
    }

    const responses = [...recording.responses, ...raw, ...limited.responses];
    const problems = responses.flatMap((r) => {
      const own = conformance.check(r);
      const inManagement = r.path.startsWith('/api/v2/') ? managementConformance.check({ ...r, path: r.path.slice('/api/v2'.length) }) : [];
      return [...own, ...inManagement.map((p) => `(management document) ${p}`)];
    });
    expect([...new Set(problems)], 'responses that the documents do not describe').toEqual([]);

    const seen = new Set(
      responses.flatMap((r) => {
        const matched = conformance.match(r.method, r.path);
        return matched ? [`${matched.method} ${matched.template} ${r.status}`] : [];
      }),
    );
    const unreached = conformance.documentedStatuses().filter((s) => !seen.has(s) && !NOT_EXERCISED.some(([pattern]) => pattern.test(s)));
    expect(unreached, 'documented statuses no request produced: add an example (test-support/operation-examples.ts) or fix the declaration').toEqual([]);
    expect(responses.length).toBeGreaterThan(1000);
  });
});

/**
 * A fuzzing campaign: the server started apart (target.ts), the context its families need (the OpenAPI
 * document, a Management API token, real objects to aim at, JWT material), then each family's inputs, sampled
 * by fast-check from one seed, sent one after another and held to the invariants (invariants.ts). The server's
 * memory is measured after a warm-up and again at the end, each time after a full garbage collection.
 *
 * Reproducible: the same seed gives every family the same inputs in the same order; FUZZ_INDEX replays one.
 */
import fc from 'fast-check';
import { Conformance, type OpenApiDocument } from '../../packages/server/src/test-support/openapi-conformance.js';
import { FAMILIES } from './families/index.js';
import type { Family, FuzzContext } from './families/family.js';
import { makeJwtMaterial } from './grammars/index.js';
import { SchemaArbitraries } from './schema-arbitrary.js';
import { startTarget, type Memory, type Target } from './target.js';

export interface CampaignOptions {
  seed: number;
  /** Requests per family. */
  inputsPerFamily: number;
  /** Family names; all when absent. */
  families?: string[];
  /** Replays only this input of each family. */
  index?: number;
  log?: (line: string) => void;
}

export interface Failure {
  signature: string;
  count: number;
  /** The first input that failed so, its index in the family's sequence, and what was wrong. */
  index: number;
  problem: string;
  input: unknown;
}

export interface FamilyResult {
  name: string;
  summary: string;
  seed: number;
  inputs: number;
  requests: number;
  failures: Failure[];
  ms: number;
}

export interface CampaignResult {
  seed: number;
  families: FamilyResult[];
  memory: { baseline: Memory; after: Memory; limit: number };
}

/** The server's heap after the campaign may exceed the warmed-up baseline by this much, at most. */
export const HEAP_GROWTH_FACTOR = 1.25;
export const HEAP_GROWTH_SLACK = 16 * 1024 * 1024;

/** Each family's own seed, from the campaign's: a family re-run alone gets the same inputs. */
export function familySeed(seed: number, name: string): number {
  let hash = seed | 0;
  for (const char of name) hash = (Math.imul(hash, 31) + char.charCodeAt(0)) | 0;
  return hash;
}

async function json<T>(response: Promise<Response>, what: string, expected = 200): Promise<T> {
  const r = await response;
  if (r.status !== expected) throw new Error(`${what}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

async function prepareContext(target: Target): Promise<FuzzContext> {
  const url = target.url;
  const document = await json<OpenApiDocument>(fetch(`${url}/openapi.json`), 'the OpenAPI document');
  const { access_token: token } = await json<{ access_token: string }>(
    fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', ...target.admin, audience: target.managementAudience }),
    }),
    'a Management API token',
  );
  const api = <T = Record<string, string>>(method: string, path: string, body: unknown, expected = 201) =>
    json<T>(fetch(`${url}/api/v2${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }), `${method} ${path}`, expected);
  const client = await api('POST', '/clients', {
    name: 'Fuzz app',
    app_type: 'spa',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'implicit', 'refresh_token', 'http://auth0.com/oauth/grant-type/password-realm', 'http://auth0.com/oauth/grant-type/passwordless/otp'],
    callbacks: ['https://app.example/callback'],
    allowed_logout_urls: ['https://app.example/'],
    web_origins: ['https://app.example'],
    allowed_origins: ['https://app.example'],
    cross_origin_authentication: true,
    cross_origin_loc: 'https://app.example/cross-origin',
  });
  const connections = await json<{ id: string; name: string }[]>(fetch(`${url}/api/v2/connections`, { headers: { authorization: `Bearer ${token}` } }), 'connections');
  for (const connection of connections) {
    const r = await fetch(`${url}/api/v2/connections/${connection.id}/clients`, { method: 'PATCH', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify([{ client_id: client.client_id, status: true }]) });
    if (r.status !== 204) throw new Error(`enabling ${connection.name}: ${r.status}`);
  }
  const user = await api('POST', '/users', { connection: 'Username-Password-Authentication', email: 'fuzz-fixture@example.com', password: 'correct horse battery staple 42' });
  const role = await api('POST', '/roles', { name: 'fuzz role' }, 200);
  const org = await api('POST', '/organizations', { name: 'fuzz-org' });
  const group = await api('POST', '/groups', { name: 'fuzz group' });
  const connection = await api('POST', '/connections', { name: 'fuzz-db', strategy: 'auth0' });
  const rs = await api('POST', '/resource-servers', { identifier: 'https://fuzz.example/api', name: 'Fuzz API', scopes: [{ value: 'read:x', description: 'x' }] });
  const jwks = await json<{ keys: Record<string, string>[] }>(fetch(`${url}/.well-known/jwks.json`), 'the JWKS');
  const issuer = `${url}/`;
  return {
    target,
    document,
    conformance: new Conformance(document),
    schemas: new SchemaArbitraries(document as never),
    token,
    secrets: target.secrets,
    clientId: client.client_id!,
    ids: {
      id: [user.user_id!, role.id!, org.id!, group.id!, connection.id!, rs.id!, client.client_id!],
      user_id: [user.user_id!],
      connection_id: [connection.id!],
      group_id: [group.id!],
      name: [org.name!],
      provider: ['auth0'],
    },
    jwt: await makeJwtMaterial(issuer, [`${issuer}userinfo`, target.managementAudience], jwks),
  };
}

function signatureOf(problem: string): string {
  return problem
    .replace(/\/[A-Za-z0-9_%|.-]{12,}/g, '/{…}')
    .replace(/\?.*?:/, ':')
    .split(/: (?=[^:]*$)|; body:|\(documented/)[0]!
    .replace(/\d{2,}/g, '#')
    .slice(0, 160);
}

async function runFamily(context: FuzzContext, family: Family<never>, options: CampaignOptions, log: (line: string) => void): Promise<FamilyResult> {
  const seed = familySeed(options.seed, family.name);
  const started = Date.now();
  const arbitrary = family.arbitrary(context) as fc.Arbitrary<never>;
  const perInput = (input: never) => family.requestsPerInput?.(input) ?? 1;
  // Enough samples to reach the request budget (a race sends tens of requests per input).
  const samples = fc.sample(arbitrary, { seed, numRuns: family.requestsPerInput ? Math.ceil(options.inputsPerFamily / 10) + 10 : options.inputsPerFamily });
  const failures = new Map<string, Failure>();
  let requests = 0;
  let inputs = 0;
  for (let index = 0; index < samples.length; index++) {
    if (options.index !== undefined && index !== options.index) continue;
    if (options.index === undefined && requests >= options.inputsPerFamily) break;
    const input = samples[index]!;
    let problems: string[];
    try {
      problems = await family.run(context, input);
    } catch (error) {
      problems = [`the request failed: ${(error as Error).message}`];
    }
    requests += perInput(input);
    inputs++;
    for (const problem of problems) {
      const signature = `${family.name}: ${(family.signature ?? signatureOf)(problem)}`;
      const seen = failures.get(signature);
      if (seen) seen.count++;
      else {
        failures.set(signature, { signature, count: 1, index, problem, input });
        log(`  ✗ ${signature}\n      first at input ${index}: ${problem.slice(0, 400)}`);
      }
    }
  }
  return { name: family.name, summary: family.summary, seed, inputs, requests, failures: [...failures.values()], ms: Date.now() - started };
}

export async function runCampaign(options: CampaignOptions): Promise<CampaignResult> {
  const log = options.log ?? (() => undefined);
  const families = FAMILIES.filter((f) => !options.families || options.families.includes(f.name));
  const unknown = options.families?.filter((name) => !FAMILIES.some((f) => f.name === name)) ?? [];
  if (unknown.length > 0) throw new Error(`unknown families: ${unknown.join(', ')} (there are: ${FAMILIES.map((f) => f.name).join(', ')})`);
  const target = await startTarget();
  try {
    const context = await prepareContext(target);
    // Warm-up (not counted): every family's code paths, caches and pools, before the baseline.
    for (const family of families) {
      for (const input of fc.sample(family.arbitrary(context) as fc.Arbitrary<never>, { seed: options.seed ^ 0x5eed, numRuns: family.requestsPerInput ? 1 : 30 })) {
        await family.run(context, input).catch(() => undefined);
      }
    }
    const baseline = await target.measure();
    const results: FamilyResult[] = [];
    for (const family of families) {
      log(`${family.name}: ${family.summary}`);
      results.push(await runFamily(context, family, options, log));
    }
    const after = await target.measure();
    return { seed: options.seed, families: results, memory: { baseline, after, limit: baseline.heapUsed * HEAP_GROWTH_FACTOR + HEAP_GROWTH_SLACK } };
  } finally {
    await target.stop();
  }
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export function formatReport(result: CampaignResult): string {
  const lines = [
    `seed ${result.seed}`,
    '',
    `${'family'.padEnd(24)} ${'inputs'.padStart(7)} ${'requests'.padStart(9)} ${'failing kinds'.padStart(14)} ${'time'.padStart(8)}`,
    ...result.families.map((f) => `${f.name.padEnd(24)} ${String(f.inputs).padStart(7)} ${String(f.requests).padStart(9)} ${String(f.failures.length).padStart(14)} ${`${(f.ms / 1000).toFixed(1)} s`.padStart(8)}`),
    '',
    `server heap after GC: ${mb(result.memory.baseline.heapUsed)} after warm-up, ${mb(result.memory.after.heapUsed)} at the end (bound ${mb(result.memory.limit)}: ×${HEAP_GROWTH_FACTOR} + ${mb(HEAP_GROWTH_SLACK)}); RSS ${mb(result.memory.baseline.rss)} → ${mb(result.memory.after.rss)}`,
  ];
  for (const family of result.families) {
    for (const failure of family.failures) {
      lines.push('', `✗ ${failure.signature} (${failure.count}×)`, `  ${failure.problem.slice(0, 600)}`, `  input ${failure.index}: ${JSON.stringify(failure.input).slice(0, 600)}`, `  replay: FUZZ_SEED=${result.seed} FUZZ_FAMILY=${family.name} FUZZ_INDEX=${failure.index} npm run fuzz`);
    }
  }
  return lines.join('\n');
}

/**
 * HTTP itself, written byte by byte: unknown and odd methods, repeated headers (Host, Content-Type,
 * Authorization, Content-Length), oversized headers and request lines, odd paths. The answer is the family's
 * JSON (405 with Allow for a method a path does not have), never a 5xx, never Node's or Fastify's own shape.
 */
import fc from 'fast-check';
import { checkExchange } from '../invariants.js';
import { sendRaw, type Family } from './family.js';

interface EdgeInput {
  method: string;
  path: string;
  headers: [string, string][];
  body: string;
}

const PATHS = ['/oauth/token', '/userinfo', '/api/v2/users', '/api/v2/roles', '/dbconnections/signup', '/authorize', '/u/login', '/.well-known/jwks.json', '/nope', '/api/v2/nope', '/dbconnections/nope'];

/** What makes the request odd, for grouping failures: the method if unknown, the repeated or oversized headers. */
function describeEdge(input: EdgeInput): string {
  const counts = new Map<string, number>();
  for (const [name] of input.headers) counts.set(name.toLowerCase(), (counts.get(name.toLowerCase()) ?? 0) + 1);
  const repeated = [...counts].filter(([, n]) => n > 1).map(([name]) => `two ${name}`);
  const large = input.headers.some(([name]) => name === 'X-Large') ? ['a large header'] : [];
  const standard = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'].includes(input.method);
  return [standard ? 'HTTP' : `method ${input.method}`, ...repeated, ...large, ...(counts.has('transfer-encoding') ? ['chunked'] : [])].join(', ');
}

export const httpEdge: Family<EdgeInput> = {
  name: 'http-edge',
  signature: (problem) => problem.split(' — ')[0]!,
  summary: 'unknown methods, duplicated Host/Content-Type/Authorization/Content-Length, oversized headers, odd paths',
  arbitrary: (context) => {
    const host = new URL(context.target.url).host;
    const method = fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS') },
      { weight: 2, arbitrary: fc.constantFrom('QUERY', 'PROPFIND', 'TRACE', 'CONNECT', 'FOO', 'SEARCH', 'MKCOL', 'LOCK', 'get', 'Get') },
    );
    const path = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...PATHS) }, { weight: 1, arbitrary: fc.constantFrom('//oauth/token', '/oauth/token/', '/api/v2/users/%', '/api/v2/users/%ZZ', '/a'.repeat(2000), '/api/v2/users?q=%', '/oauth%2Ftoken', '*') });
    const extra: fc.Arbitrary<[string, string][]> = fc.array(
      fc.oneof(
        fc.constant<[string, string]>(['Host', 'other-tenant.invalid']),
        fc.constant<[string, string]>(['Host', host]),
        fc.constant<[string, string]>(['Content-Type', 'application/json']),
        fc.constant<[string, string]>(['Content-Type', 'text/plain']),
        fc.constant<[string, string]>(['Authorization', 'Bearer x']),
        fc.constant<[string, string]>(['Authorization', `Bearer ${context.token}`]),
        fc.constant<[string, string]>(['Content-Length', '5']),
        fc.constant<[string, string]>(['Transfer-Encoding', 'chunked']),
        fc.constant<[string, string]>(['X-Forwarded-For', '10.0.0.1, 10.0.0.2']),
        fc.integer({ min: 1, max: 40 }).map<[string, string]>((kb) => ['X-Large', 'a'.repeat(kb * 1024)]),
      ),
      { maxLength: 3 },
    );
    return fc.record({ method, path, headers: extra.map((h) => [['Host', host] as [string, string], ...h]), body: fc.constantFrom('', '{}', 'grant_type=client_credentials', '{"a":') });
  },
  run: async (context, input) => {
    const hasLength = input.headers.some(([name]) => /^(content-length|transfer-encoding)$/i.test(name));
    const lines = [`${input.method} ${input.path} HTTP/1.1`, ...input.headers.map(([k, v]) => `${k}: ${v}`), ...(hasLength ? [] : [`Content-Length: ${Buffer.byteLength(input.body)}`]), 'Connection: close', '', input.body];
    const what = describeEdge(input);
    let exchange;
    try {
      exchange = await sendRaw(context, lines.join('\r\n'));
    } catch (error) {
      return [`no HTTP answer, the connection was reset (${(error as Error).message}) — to ${what} ${input.path.slice(0, 40)}`];
    }
    if (exchange.status === 0) return [`no HTTP answer, the connection was closed — to ${what} ${input.path.slice(0, 40)}`];
    // A request the server's HTTP parser refuses before any route is met is still answered in the family's shape.
    const problems = checkExchange({ ...exchange, method: input.method, url: input.path }, context);
    if (problems.length === 0) return [];
    // Grouped by the answer (Node's or Fastify's own, say), whatever request drew it.
    let message: string;
    try {
      message = String((JSON.parse(exchange.body) as { message?: unknown }).message ?? '');
    } catch {
      message = exchange.body.slice(0, 40);
    }
    return [`answer ${exchange.status} "${message}" — to ${what} ${input.path.slice(0, 40)}: ${problems.join('; ')}`];
  },
};

/**
 * The peer of a scenario: a bare Fastify app that answers `GET <BENCH_PEER_PATH>` with the JSON document in
 * BENCH_PEER_BODY_FILE (what Gatehouse answered on the same path, captured by run.js). No logger, no hooks,
 * no plugins, no schema: route lookup, JSON.stringify, write. That is about as fast as "Fastify returning
 * this JSON" gets on this machine, so Gatehouse's figure is read as a fraction of it.
 *
 * Environment: PORT (required), HOST (default 127.0.0.1), BENCH_PEER_PATH, BENCH_PEER_BODY_FILE.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

/** @param {string} name */
function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`bare-fastify peer: ${name} is required`);
    process.exit(2);
  }
  return value;
}

const port = Number(required('PORT'));
const host = process.env.HOST || '127.0.0.1';
const routePath = required('BENCH_PEER_PATH');
/** @type {unknown} */
const body = JSON.parse(readFileSync(required('BENCH_PEER_BODY_FILE'), 'utf8'));

const app = Fastify({ logger: false });
app.get(routePath, async () => body);

for (const signal of /** @type {const} */ (['SIGTERM', 'SIGINT'])) {
  process.once(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

await app.listen({ port, host });

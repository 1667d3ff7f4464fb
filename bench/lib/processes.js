/**
 * Child processes and temp dirs of one bench run: every server runs in its own process, so the load
 * generator (autocannon, in the bench process) never shares an event loop with what it measures. Everything
 * made here is registered, and `cleanUp` (called from run.js in `finally`, on SIGINT/SIGTERM, and as a last
 * resort on exit) stops every child and removes every temp dir.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** @import { ChildProcess } from 'node:child_process' */

/**
 * @typedef {object} Child
 * @property {string} name       what it is, for messages ("Gatehouse", "bare Fastify")
 * @property {ChildProcess} process
 * @property {() => string} output  the last few KB of its stdout and stderr, for error messages
 * @property {Promise<number | null>} exited  resolves with the exit code (null when killed by a signal)
 */

/** How much of a child's output is kept for error messages. */
const OUTPUT_TAIL = 16 * 1024;

/** @type {Set<Child>} */
const children = new Set();
/** @type {Set<string>} */
const tempDirs = new Set();

/** A fresh directory under the OS temp dir, removed by `cleanUp`. */
export function makeTempDir(/** @type {string} */ prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/**
 * A TCP port that was free a moment ago on 127.0.0.1 (the OS picks it; the child binds it right after, so
 * the race with other processes is theoretical on a bench machine).
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not get a free port'))));
    });
  });
}

/**
 * Starts `node <script> ...args` as a registered child. Its output is kept (not shown) so the bench's own
 * stdout stays a clean report; `output()` gives the tail when something goes wrong.
 * @param {string} name
 * @param {string} script  absolute path of the script to run with this Node binary
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env  the complete environment of the child
 * @returns {Child}
 */
export function startChild(name, script, args, env) {
  // BENCH_CPU_PROF=<dir>: every server and peer writes a V8 CPU profile there when it stops (`--cpu-prof`, which
  // NODE_OPTIONS does not allow), to see where a scenario's time goes. BENCH_CHILD_NODE_ARGS adds any other node
  // options to every process the bench starts.
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const nodeArgs = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...profile, ...nodeArgs, script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  /** @param {Buffer} chunk */
  const keep = (chunk) => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  /** @type {Promise<number | null>} */
  const exited = new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (err) => {
      keep(Buffer.from(`\n[spawn failed: ${err.message}]\n`));
      resolve(-1);
    });
  });
  const entry = { name, process: child, output: () => tail, exited };
  children.add(entry);
  void exited.then(() => children.delete(entry));
  return entry;
}

/**
 * SIGTERM, then SIGKILL if the child is still there after `graceMs`. Resolves with the exit code.
 * @param {Child} child
 * @param {number} [graceMs]
 */
export async function stopChild(child, graceMs = 5_000) {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return child.exited;
  child.process.kill('SIGTERM');
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const killed = new Promise((resolve) => {
    timer = setTimeout(() => {
      child.process.kill('SIGKILL');
      resolve(undefined);
    }, graceMs);
  });
  await Promise.race([child.exited, killed]);
  clearTimeout(timer);
  return child.exited;
}

/** Stops every child still running and removes every temp dir. Safe to call more than once. */
export async function cleanUp() {
  await Promise.all([...children].map((child) => stopChild(child)));
  removeTempDirs();
}

/** The synchronous last resort for `process.on('exit')`: no waiting possible, so SIGKILL. */
export function cleanUpNow() {
  for (const child of children) child.process.kill('SIGKILL');
  children.clear();
  removeTempDirs();
}

function removeTempDirs() {
  for (const dir of tempDirs) {
    rmSync(dir, { recursive: true, force: true });
    tempDirs.delete(dir);
  }
}

/**
 * Polls `url` until it answers `status` (200 by default), for at most `timeoutMs`. Fails early, with the
 * child's output, when the child exits first.
 * @param {Child} child
 * @param {string} url
 * @param {{ headers?: Record<string, string>, timeoutMs?: number, status?: number }} [options]
 * @returns {Promise<Response>}  the first answer with the wanted status (its body not yet read)
 */
export async function waitForHttp(child, url, { headers = {}, timeoutMs = 30_000, status = 200 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  let exited = false;
  void child.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) {
      throw new Error(`${child.name} exited (code ${child.process.exitCode}) before ${url} answered.\n${describeOutput(child)}`);
    }
    try {
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(2_000) });
      if (response.status === status) return response;
      last = `HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`;
    } catch (err) {
      last = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${child.name}: ${url} did not answer ${status} within ${timeoutMs / 1000} s (last: ${last}).\n${describeOutput(child)}`);
}

/**
 * The child's output for an error message, with secrets the Gatehouse banner prints once blanked out (they
 * belong to a throwaway data dir, but logs get pasted into issues).
 * @param {Child} child
 */
export function describeOutput(child) {
  const text = child.output().replace(/(client_secret["':\s]+)\S+/g, '$1<redacted>').trim();
  return text ? `--- ${child.name} output (tail) ---\n${text}\n---` : `(${child.name} printed nothing)`;
}

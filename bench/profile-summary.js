#!/usr/bin/env node
/**
 * node bench/profile-summary.js <file.cpuprofile> [top]: where a V8 CPU profile's time went (a profile from
 * BENCH_CPU_PROF), as three lists of the `top` (default 30) entries: self time by function, self time by file,
 * and total time (self plus callees) by function.
 *
 * Read with care on a loaded machine: V8 samples wall-clock time, so a thread descheduled inside a function is
 * charged to it. A call that wakes another thread (node:crypto's sign handing work to the thread pool, a socket
 * write waking the load generator) then looks far more expensive than its CPU cost. The bench's CPU µs/op
 * column is the CPU time; this says where to look.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * @typedef {object} CallFrame
 * @property {string} functionName
 * @property {string} url
 * @property {number} lineNumber  0-based
 */
/**
 * @typedef {object} ProfileNode
 * @property {number} id
 * @property {CallFrame} callFrame
 * @property {number[]} [children]
 */
/**
 * @typedef {object} CpuProfile
 * @property {ProfileNode[]} nodes
 * @property {number[]} samples     node id of each sample
 * @property {number[]} timeDeltas  µs before each sample
 */

/** A file path short enough to read: dependencies from node_modules/, our own from the repository. */
const REPOSITORY = fileURLToPath(new URL('..', import.meta.url));

/** @param {string} url */
function shortFile(url) {
  if (!url) return '';
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const dependency = file.lastIndexOf('node_modules/');
  if (dependency >= 0) return file.slice(dependency);
  return file.startsWith(REPOSITORY) ? file.slice(REPOSITORY.length) : file;
}

/** @param {CallFrame} frame */
function functionKey(frame) {
  const file = shortFile(frame.url);
  return `${frame.functionName || '(anonymous)'}${file ? ` ${file}:${frame.lineNumber + 1}` : ''}`;
}

/**
 * @param {CpuProfile} profile
 * @returns {{ total: number, selfByFunction: Map<string, number>, selfByFile: Map<string, number>, totalByFunction: Map<string, number> }}
 */
export function summarize(profile) {
  /** @type {Map<number, ProfileNode>} */
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  /** @type {Map<number, number>} */
  const parents = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  /** @type {Map<number, number>} µs of samples per node */
  const selfByNode = new Map();
  profile.samples.forEach((id, i) => selfByNode.set(id, (selfByNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

  const selfByFunction = new Map();
  const selfByFile = new Map();
  const totalByFunction = new Map();
  /** @param {Map<string, number>} map @param {string} key @param {number} us */
  const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);
  let total = 0;
  for (const [id, us] of selfByNode) {
    total += us;
    const frame = /** @type {ProfileNode} */ (nodes.get(id)).callFrame;
    add(selfByFunction, functionKey(frame), us);
    add(selfByFile, shortFile(frame.url) || `(${frame.functionName})`, us);
    // Total time: each function once per sample, however often it recurs on the stack.
    const seen = new Set();
    for (let at = /** @type {number | undefined} */ (id); at !== undefined; at = parents.get(at)) {
      const key = functionKey(/** @type {ProfileNode} */ (nodes.get(at)).callFrame);
      if (!seen.has(key)) {
        seen.add(key);
        add(totalByFunction, key, us);
      }
    }
  }
  return { total, selfByFunction, selfByFile, totalByFunction };
}

/** @param {string} title @param {Map<string, number>} map @param {number} total @param {number} top */
function print(title, map, total, top) {
  console.log(`\n${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, topArg] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node bench/profile-summary.js <file.cpuprofile> [top]');
    process.exit(2);
  }
  const top = Number(topArg ?? 30);
  const { total, selfByFunction, selfByFile, totalByFunction } = summarize(JSON.parse(readFileSync(file, 'utf8')));
  console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
  print('self time by function', selfByFunction, total, top);
  print('self time by file', selfByFile, total, top);
  print('total time by function (self and callees)', totalByFunction, total, top);
}

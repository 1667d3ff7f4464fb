/**
 * The report: one table of every measured row, then each scenario's figures (ratios), which the scenarios
 * write themselves because only they know what their rows are compared with.
 */

/** @import { Measurement } from './load.js' */

/**
 * @typedef {object} Row
 * @property {string} scenario
 * @property {string} target
 * @property {string} unit  what the rate counts: req/s, tokens/s, signs/s
 * @property {Measurement} measurement
 */

/** @param {number} ms */
function formatMs(ms) {
  return Number.isInteger(ms) ? String(ms) : ms.toFixed(2);
}

/** @param {Row[]} rows */
export function table(rows) {
  const header = ['scenario', 'target', 'rate (average)', 'unit', 'p50 ms', 'p99 ms', 'non-2xx', 'CPU µs/op', 'load gen. CPU µs/op'];
  const numeric = [false, false, true, false, true, true, true, true, true];
  /** @param {number | null} us */
  const micros = (us) => (us === null ? '-' : Math.round(us).toLocaleString('en-US'));
  const lines = rows.map(({ scenario, target, unit, measurement: m }) => [
    scenario,
    target,
    Math.round(m.requestsPerSecond).toLocaleString('en-US'),
    unit,
    formatMs(m.p50),
    formatMs(m.p99),
    m.non2xx === null ? '-' : String(m.non2xx),
    micros(m.cpuPerOp),
    micros(m.loadCpuPerOp),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((line) => (line[i] ?? '').length)));
  /** @param {string[]} cells */
  const format = (cells) =>
    cells.map((cell, i) => (numeric[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0))).join(' | ');
  return [format(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...lines.map(format)].join('\n');
}

/**
 * `rows` that cannot give a figure, as "the X and Y run failed", or undefined when all of them can.
 * @param {Row[]} rows
 */
export function failedRuns(rows) {
  const failed = rows.filter((row) => row.measurement.problems.length > 0);
  return failed.length > 0 ? `the ${failed.map((row) => row.target).join(' and ')} run failed` : undefined;
}

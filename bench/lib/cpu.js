/**
 * CPU time used by a process and all its descendants (cluster workers, thread pools and worker_threads
 * included), from /proc. Divided by the operations of a run, it gives CPU per request, which, unlike requests
 * per second, does not move when something else on the machine takes CPU time away during the run.
 *
 * Linux only; elsewhere `treeCpuSeconds` returns undefined and the report shows "-".
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Linux reports times in clock ticks of USER_HZ, which is 100 on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/**
 * `[ppid, utime + stime in ticks]` of one process, or undefined if it is gone.
 * @param {string} pid
 * @returns {[number, number] | undefined}
 */
function readStat(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid … utime stime …": comm may hold spaces and parentheses, so split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return [Number(fields[1]), Number(fields[11]) + Number(fields[12])];
}

/**
 * User + system CPU seconds of `rootPid` and every live descendant, so far.
 * @param {number} rootPid
 * @returns {number | undefined}
 */
export function treeCpuSeconds(rootPid) {
  if (process.platform !== 'linux') return undefined;
  /** @type {Map<number, number[]>} */
  const children = new Map();
  /** @type {Map<number, number>} */
  const ticks = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (!stat) continue;
    const [ppid, cpu] = stat;
    const pid = Number(entry);
    ticks.set(pid, cpu);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  if (!ticks.has(rootPid)) return undefined;
  let total = 0;
  const pending = [rootPid];
  while (pending.length > 0) {
    const pid = /** @type {number} */ (pending.pop());
    total += ticks.get(pid) ?? 0;
    pending.push(...(children.get(pid) ?? []));
  }
  return total / TICKS_PER_SECOND;
}

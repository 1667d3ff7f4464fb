/**
 * `npm run soak [-- --duration=10m]` (or SOAK_DURATION=…): the two-node soak of soak.ts, bounded (10 minutes by
 * default; `90s`, `5m` or milliseconds). Needs PostgreSQL and Redis (GATEHOUSE_TEST_POSTGRES_URL,
 * GATEHOUSE_TEST_REDIS_URL, or the local defaults). Exits 1 when a check fails.
 */
import { formatReport, runSoak } from './soak.js';

function parseDuration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
  if (!match) throw new Error(`duration ${JSON.stringify(value)}: expected e.g. 600s, 10m or 45000`);
  const n = Number(match[1]);
  return match[2] === 'm' ? n * 60_000 : match[2] === 's' ? n * 1000 : n;
}

const flag = process.argv.find((a) => a.startsWith('--duration='))?.slice('--duration='.length);
const durationMs = parseDuration(flag ?? process.env.SOAK_DURATION ?? '10m');
const concurrency = Number(process.env.SOAK_CONCURRENCY ?? 8);
const report = await runSoak({ durationMs, concurrency, log: (line) => console.log(`[soak] ${line}`) });
console.log(`\n${formatReport(report)}`);
process.exitCode = report.ok ? 0 : 1;

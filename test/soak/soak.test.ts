/**
 * The CI slice of the two-node soak (soak.ts): the same workload, kill and checks, for about 45 seconds.
 * The full run is `npm run soak` (10 minutes by default).
 */
import { describe, expect, it } from 'vitest';
import { postgresAvailable, redisAvailable } from '../../packages/server/src/test-support/services.js';
import { formatReport, runSoak } from './soak.js';

const available = (await postgresAvailable()) && (await redisAvailable());

describe.runIf(available)('two-node soak (CI slice)', () => {
  it('keeps every acknowledged write, delivers every event, and shares counters through a SIGKILL', { timeout: 300_000 }, async () => {
    const report = await runSoak({ durationMs: 45_000, concurrency: 6 });
    const failed = report.checks.filter((c) => !c.ok);
    expect(failed, formatReport(report)).toEqual([]);
    expect(report.checks.map((c) => c.name)).toHaveLength(6);
    expect(report.operations.signup?.ok ?? 0).toBeGreaterThan(0);
    expect(report.operations.refresh?.ok ?? 0).toBeGreaterThan(0);
    expect(report.operations['management-update']?.ok ?? 0).toBeGreaterThan(0);
  });
});

if (!available) {
  describe('two-node soak', () => {
    it.skip('PostgreSQL or Redis unreachable: skipped (see the notice above)', () => undefined);
  });
}

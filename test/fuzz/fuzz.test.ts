/**
 * The bounded slice of the fuzzing campaign that runs with every `npm test`: every family, a few hundred
 * requests each, from a fixed seed (so a failure here replays with `FUZZ_SEED=20240611 FUZZ_FAMILY=… npm run
 * fuzz`). The full campaign (10,000 per family, any seed) is `npm run fuzz`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatReport, runCampaign, type CampaignResult } from './campaign.js';
import { FAMILIES } from './families/index.js';

const SEED = 20240611;
const REQUESTS_PER_FAMILY = 200;

describe('fuzzing slice (fixed seed)', () => {
  let result: CampaignResult;

  beforeAll(async () => {
    result = await runCampaign({ seed: SEED, inputsPerFamily: REQUESTS_PER_FAMILY });
    console.log(formatReport(result));
  }, 600_000);
  afterAll(() => undefined);

  for (const family of FAMILIES) {
    it(`${family.name}: every invariant holds (${family.summary})`, () => {
      const figures = result.families.find((f) => f.name === family.name)!;
      expect(figures.requests).toBeGreaterThanOrEqual(REQUESTS_PER_FAMILY);
      expect(figures.failures.map((f) => `${f.signature} (${f.count}×): ${f.problem.slice(0, 300)}`)).toEqual([]);
    });
  }

  it("the server's heap comes back near its baseline after a full GC", () => {
    expect(result.memory.after.heapUsed).toBeLessThanOrEqual(result.memory.limit);
  });
});

/**
 * npm run fuzz: the full campaign (10,000 requests per family by default) against a server of its own.
 *
 *   FUZZ_SEED=<integer>      the seed (printed; random when absent)
 *   FUZZ_RUNS=<n>            requests per family
 *   FUZZ_FAMILY=a,b          only these families
 *   FUZZ_INDEX=<i>           replay one input of each family (with the seed that found it)
 *
 * Exits 1 when an invariant failed or the server's heap did not come back near its baseline.
 */
import { formatReport, runCampaign } from './campaign.js';

function integer(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^-?\d+$/.test(raw)) {
    console.error(`${name}=${raw}: expected an integer`);
    process.exit(2);
  }
  return Number(raw);
}

const seed = integer('FUZZ_SEED') ?? Math.floor(Math.random() * 2 ** 31);
const inputsPerFamily = integer('FUZZ_RUNS') ?? 10_000;
const families = process.env.FUZZ_FAMILY ? process.env.FUZZ_FAMILY.split(',').map((f) => f.trim()) : undefined;
const index = integer('FUZZ_INDEX');
console.log(`fuzzing with seed ${seed} (re-run with FUZZ_SEED=${seed}), ${inputsPerFamily} requests per family`);
const started = Date.now();
const result = await runCampaign({ seed, inputsPerFamily, ...(families && { families }), ...(index !== undefined && { index }), log: (line) => console.log(line) });
console.log(`\n${formatReport(result)}\n\ntotal ${((Date.now() - started) / 1000).toFixed(0)} s`);
const failed = result.families.some((f) => f.failures.length > 0) || result.memory.after.heapUsed > result.memory.limit;
process.exit(failed ? 1 : 0);

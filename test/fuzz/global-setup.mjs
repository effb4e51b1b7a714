// The tests' own global setup (one migrated template database), then the fuzz run's size and seed,
// resolved once for every worker and printed so that a failing run can be replayed.
import globalSetup from '../support/global-setup.mjs';

const DEFAULT_RUNS = 300;
const DEFAULT_SEED = 1313;

export default async function fuzzGlobalSetup() {
  await globalSetup();
  if (process.env.FUZZ_SEED === 'random') process.env.FUZZ_SEED = String(Math.floor(Math.random() * 2 ** 31));
  process.env.FUZZ_SEED ??= String(DEFAULT_SEED);
  process.env.FUZZ_RUNS ??= String(DEFAULT_RUNS);
  console.log(`\nfuzz: FUZZ_SEED=${process.env.FUZZ_SEED} FUZZ_RUNS=${process.env.FUZZ_RUNS} (set them to replay or resize this run)`);
}

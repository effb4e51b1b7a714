import fc from 'fast-check';

/**
 * How much the fuzz tier runs: `FUZZ_RUNS` generated inputs per property (scaled by each property's
 * weight) from one fixed `FUZZ_SEED`, so that a run is reproducible. The global setup
 * (test/fuzz/global-setup.mjs) gives both their defaults (`FUZZ_SEED=random` picks a new seed) and prints them.
 */
export function fuzzRuns(): number {
  const runs = Number(process.env.FUZZ_RUNS);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`FUZZ_RUNS must be a positive whole number, not ${process.env.FUZZ_RUNS}`);
  return runs;
}

export function fuzzSeed(): number {
  const seed = Number(process.env.FUZZ_SEED);
  if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be a whole number or "random", not ${process.env.FUZZ_SEED}`);
  return seed;
}

/** Long strings (a megabyte body) cut down in a failure report, which stays readable in CI logs. */
function shorten(report: string): string {
  return report.replace(/(.)\1{199,}/gsu, (run: string, char: string) => `${char.repeat(20)}…(${char} ×${run.length / char.length})…`);
}

function readableReport<T>(): fc.Plugin<T> {
  return () => ({
    onAllRunsComplete(details) {
      if (!details.failed) return;
      const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      throw new Error(shorten(`${fc.defaultReportMessage(details) ?? 'Property failed'}\n\n${error}`));
    },
  });
}

/**
 * Parameters of one property: `weight` scales the run count (cheap properties run more, those that
 * send a megabyte fewer). A failure is shrunk to a small input and reported with the seed and path
 * that replay it (`fc.assert(…, { seed, path })`).
 */
export function fuzzParameters<T>(weight = 1): fc.Parameters<T> {
  return { numRuns: Math.max(1, Math.round(fuzzRuns() * weight)), seed: fuzzSeed(), plugins: [readableReport<T>()] };
}

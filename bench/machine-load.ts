// How busy the machine is with work other than the benchmark's own: a rate measured beside other work is not the build's.
import { readdirSync, readFileSync } from 'node:fs';
import { ownCpuMicros, processCpuMicros } from './harness.js';

/** Time of all the machine's CPUs so far from /proc/stat, in µs: spent by processes (user, nice, system, and steal, which is other guests' work) and in all. */
function machineMicros(): { processes: number; total: number } | undefined {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    return { processes: (f[0]! + f[1]! + f[2]! + f[7]!) * 10_000, total: f.reduce((a, b) => a + b, 0) * 10_000 };
  } catch {
    return undefined;
  }
}

/** CPU time of this process with its waited-for children (utime, stime, cutime, cstime), in µs. */
function selfWithChildrenMicros(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10_000;
}

/**
 * CPU time of the PostgreSQL processes that serve `database`: its backends, and the server's own processes
 * (writer, WAL writer, checkpointer...), in µs; not other databases' backends.
 */
function postgresMicros(database: string | undefined): number {
  let sum = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      // "postgres: 15/main: postgres agora_bench_… 127.0.0.1(41454) SELECT" for a backend; "postgres: 15/main: walwriter" otherwise.
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const backend = /^postgres: \S+: (\S+) (\S+) [\d.:[\]a-f]+\(\d+\)/.exec(title);
      if (backend && backend[2] !== database) continue;
      sum += ownCpuMicros(Number(entry)) ?? 0;
    } catch {
      // Gone meanwhile.
    }
  }
  return sum;
}

export interface OtherWork {
  /** CPU spent by processes other than the benchmark's (this one and its children, the measured servers, PostgreSQL for the benchmark's database), in % of all the machine's CPUs. */
  otherPercent: number;
  /** The whole machine's busy share, in %. */
  busyPercent: number;
  /** CPU time PostgreSQL spent for the benchmark's database meanwhile, in µs. */
  postgresMicros: number;
}

/**
 * Measures, while `run` runs, how much of the machine other work took: the machine's CPU time minus
 * what this process, its children, `pids` (with their descendants) and PostgreSQL for `database` used.
 * A rate measured beside other work is not the build's.
 */
export async function withOtherWork<T>(
  pids: number[],
  database: string | undefined,
  run: () => Promise<T>,
): Promise<{ result: T; other: OtherWork | undefined }> {
  const ours = () => selfWithChildrenMicros() + pids.reduce((sum, pid) => sum + (processCpuMicros(pid) ?? 0), 0);
  const machineBefore = machineMicros();
  const postgresBefore = postgresMicros(database);
  const oursBefore = ours();
  const result = await run();
  const oursAfter = ours();
  const postgresAfter = postgresMicros(database);
  const machineAfter = machineMicros();
  if (!machineBefore || !machineAfter || machineAfter.total <= machineBefore.total) return { result, other: undefined };
  const total = machineAfter.total - machineBefore.total;
  const busy = machineAfter.processes - machineBefore.processes;
  return {
    result,
    other: {
      otherPercent: Math.max(0, Math.round((100 * (busy - (oursAfter - oursBefore) - (postgresAfter - postgresBefore))) / total)),
      busyPercent: Math.round((100 * busy) / total),
      postgresMicros: postgresAfter - postgresBefore,
    },
  };
}

/** The machine's busy share (processes' CPU time, in % of all its CPUs) over `ms` while this benchmark runs nothing. */
export async function quietMachineBusyPercent(ms = 2_000): Promise<number | undefined> {
  const { other } = await withOtherWork([], undefined, () => new Promise((r) => setTimeout(r, ms)));
  return other?.busyPercent;
}

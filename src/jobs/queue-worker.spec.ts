import { Logger } from '@nestjs/common';
import type PgBoss from 'pg-boss';
import type { Metrics } from '../metrics/metrics.js';
import { jobKind } from './job-kind.js';
import { QueueWorker } from './queue-worker.js';

const KIND = jobKind<{ n: number }>('spec', { expireInSeconds: 30 });

/** pg-boss as the worker uses it: one job to hand out, and what was recorded of it. */
function fakeBoss() {
  const fetches: number[] = [];
  const completed: string[] = [];
  let left = [{ id: 'job-1', name: 'spec', data: { n: 1 }, retryCount: 0, retryLimit: 2 }];
  const boss = {
    fetch: async () => {
      fetches.push(performance.now());
      const jobs = left;
      left = [];
      return jobs;
    },
    complete: async (_queue: string, id: string) => void completed.push(id),
    fail: async () => undefined,
  };
  return { boss: boss as unknown as PgBoss, fetches, completed };
}

function worker(boss: PgBoss, busy: () => boolean) {
  return new QueueWorker(boss, KIND, async () => undefined, {
    concurrency: 2,
    pollMs: 50,
    busy,
    database: { executeSql: async () => ({ rows: [] }) },
    metrics: { jobCompleted: () => undefined, jobFailed: () => undefined } as unknown as Metrics,
    logger: new Logger('spec'),
  });
}

describe('QueueWorker', () => {
  it('takes jobs at once when requests are not crowding in', async () => {
    const { boss, fetches, completed } = fakeBoss();
    const w = worker(boss, () => false);
    const start = performance.now();
    w.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await w.stop(100);
    expect(fetches[0]! - start).toBeLessThan(100);
    expect(completed).toEqual(['job-1']);
  });

  it('gives way to a burst of requests for up to 3 s, then works anyway', async () => {
    const { boss, fetches, completed } = fakeBoss();
    const w = worker(boss, () => true);
    const start = performance.now();
    w.start();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(fetches).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await w.stop(100);
    expect(fetches[0]! - start).toBeGreaterThanOrEqual(2900);
    expect(completed).toEqual(['job-1']);
  });

  it('fails a job whose data its kind cannot label, as one whose handler throws, instead of crashing the process', async () => {
    const failed: { id: string; message: string }[] = [];
    let left = [{ id: 'job-1', name: 'spec', data: null, retryCount: 0, retryLimit: 2 }];
    const boss = {
      fetch: async () => {
        const jobs = left;
        left = [];
        return jobs;
      },
      complete: async () => undefined,
      fail: async (_queue: string, id: string, error: { message: string }) => void failed.push({ id, message: error.message }),
    } as unknown as PgBoss;
    const labelled = jobKind<{ message: string }>('spec', { expireInSeconds: 30, label: (data) => data.message });
    const handled: unknown[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const w = new QueueWorker(boss, labelled, async (data) => void handled.push(data), {
        concurrency: 2,
        pollMs: 50,
        busy: () => false,
        database: { executeSql: async () => ({ rows: [] }) },
        metrics: { jobCompleted: () => undefined, jobFailed: () => undefined } as unknown as Metrics,
        logger: new Logger('spec'),
      });
      w.start();
      await new Promise((resolve) => setTimeout(resolve, 200));
      await w.stop(100);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(handled).toEqual([]);
    expect(failed).toEqual([{ id: 'job-1', message: expect.stringContaining('null') }]);
    expect(unhandled).toEqual([]);
  });
});

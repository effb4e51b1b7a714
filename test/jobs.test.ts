import { Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { jobKind } from '../src/jobs/job-kind.js';
import { JobQueue } from '../src/jobs/job-queue.js';
import { JobsModule } from '../src/jobs/jobs.module.js';
import { queuesSettled } from './support/job-queue.js';
import { runCli } from './support/processes.js';
import { startTestApp, TestApp } from './support/test-app.js';

interface Work {
  key: string;
  /** Attempts that fail before one succeeds. */
  failures?: number;
  /** How long an attempt that succeeds takes. */
  slowMs?: number;
}

const WORK = jobKind<Work>('test-work', { expireInSeconds: 30, label: (data) => `test.${data.key.split('-')[0]}` });

/** A job handler as a feature module registers one, recording every attempt. */
@Injectable()
class Recorder implements OnModuleInit {
  readonly attempts: { key: string; retryCount: number }[] = [];
  constructor(private readonly jobs: JobQueue) {}
  onModuleInit(): void {
    this.jobs.handle(WORK, async (data, job) => {
      this.attempts.push({ key: data.key, retryCount: job.retryCount });
      if (job.retryCount < (data.failures ?? 0)) throw new Error(`planned failure ${job.retryCount + 1}`);
      if (data.slowMs) await new Promise((resolve) => setTimeout(resolve, data.slowMs));
    });
  }
  of(key: string) {
    return this.attempts.filter((a) => a.key === key);
  }
}

const METRICS_TOKEN = 'metrics-token-for-the-job-tests-0123456789';

/** Waits until the assertion holds (it throws until then). */
async function until(assertion: () => unknown, limitMs = 15_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    try {
      await assertion();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

let t: TestApp;
let recorder: Recorder;
let jobs: JobQueue;

beforeAll(async () => {
  t = await startTestApp(
    { JOBS_RETRY_DELAY_SECONDS: '1', JOBS_RETRY_LIMIT: '2', METRICS_TOKEN },
    { imports: [JobsModule], providers: [Recorder] },
  );
  recorder = t.get(Recorder);
  jobs = t.get(JobQueue);
});
afterAll(() => t.close());

/** Until no job of the test queue is due or running: a run that was to follow has happened. */
const settled = () => queuesSettled(t.get(DataSource), [WORK.queue]);

async function scrape(): Promise<string> {
  const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  return res.text();
}

describe('the job queue', () => {
  it('runs an enqueued job once, in a server process', async () => {
    await jobs.enqueue(WORK, { key: 'once-1' });
    await until(() => expect(recorder.of('once-1')).toHaveLength(1));
    await settled();
    expect(recorder.of('once-1')).toEqual([{ key: 'once-1', retryCount: 0 }]);
  });

  it('writes a job with the transaction it is enqueued in: rolled back, it never runs; committed, it does', async () => {
    const dataSource = t.get(DataSource);
    await expect(
      dataSource.transaction(async (tx) => {
        await jobs.enqueue(WORK, { key: 'outbox-rolled-back' }, { tx });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await dataSource.transaction(async (tx) => {
      await jobs.enqueue(WORK, { key: 'outbox-committed' }, { tx });
    });
    await until(() => expect(recorder.of('outbox-committed')).toHaveLength(1));
    await settled();
    expect(recorder.of('outbox-rolled-back')).toHaveLength(0);
  });

  it('enqueues a job with a given id once', async () => {
    const id = '5d2c8a4e-0a43-4c55-9a55-2b0f6d0f0d01';
    expect(await jobs.enqueue(WORK, { key: 'dedupe-1' }, { id })).toBe(id);
    expect(await jobs.enqueue(WORK, { key: 'dedupe-1' }, { id })).toBeNull();
    await until(() => expect(recorder.of('dedupe-1')).toHaveLength(1));
    await settled();
    expect(recorder.of('dedupe-1')).toHaveLength(1);
  });

  it('retries a failing job with growing delays until it succeeds', async () => {
    const enqueuedAt = Date.now();
    await jobs.enqueue(WORK, { key: 'retry-1', failures: 2 });
    await until(() => expect(recorder.of('retry-1')).toHaveLength(3), 30_000);
    expect(recorder.of('retry-1').map((a) => a.retryCount)).toEqual([0, 1, 2]);
    // Backoff from 1 s: the first retry after 1 to 2 s, the second after 2 to 4 s more.
    expect(Date.now() - enqueuedAt).toBeGreaterThanOrEqual(3000);
    const metrics = await scrape();
    expect(metrics).toMatch(/agora_jobs_failed_total\{kind="test.retry"\} 2/);
    expect(metrics).toMatch(/agora_jobs_completed_total\{kind="test.retry"\} 1/);
    expect(t.logs.some((l) => String(l.msg).includes('failed on attempt 1 of 3: planned failure 1; it will be retried'))).toBe(true);
  }, 40_000);

  it('keeps a job whose retries ran out as failed, where an operator sees it and can retry it', async () => {
    const id = await jobs.enqueue(WORK, { key: 'dead-1', failures: 99 });
    await until(async () => {
      const states = await jobs.states();
      expect(states.find((s) => s.queue === 'test-work')?.failed).toBe(1);
    }, 30_000);
    expect(recorder.of('dead-1')).toHaveLength(3);
    expect(await scrape()).toMatch(/agora_jobs_dead\{queue="test-work"\} 1/);
    expect(t.logs.some((l) => String(l.msg).includes(`no retry left, kept as failed (npm run cli -- jobs:retry --id ${id})`))).toBe(true);

    expect(await jobs.retry([id!])).toEqual([{ id, outcome: 'retried' }]);
    await until(() => expect(recorder.of('dead-1').length).toBeGreaterThanOrEqual(4), 10_000);
  }, 60_000);

  it('lets an operator list, inspect and retry failed jobs with the CLI', async () => {
    const id = (await jobs.enqueue(WORK, { key: 'cli-1', failures: 3 }))!;
    await until(async () => expect((await jobs.find(id))?.state).toBe('failed'), 30_000);

    const listed = await runCli(t.databaseEnv, 'jobs:list', '--state', 'failed', '--queue', 'test-work');
    expect(listed.code).toBe(0);
    const queue = listed.json.queues.find((q: { queue: string }) => q.queue === 'test-work');
    expect(queue).toMatchObject({ failed: expect.any(Number), waiting: 0 });
    const row = listed.json.jobs.find((j: { id: string }) => j.id === id);
    expect(row).toMatchObject({ queue: 'test-work', state: 'failed', attempts: 3, maxAttempts: 3, lastError: 'planned failure 3' });

    const shown = await runCli(t.databaseEnv, 'jobs:show', '--id', id);
    expect(shown.json).toMatchObject({ id, state: 'failed', data: { key: 'cli-1', failures: 3 }, archived: false });

    const retried = await runCli(t.databaseEnv, 'jobs:retry', '--id', id);
    expect(retried.json).toEqual({ retried: 1, jobs: [{ id, outcome: 'retried' }] });
    // One more attempt: the fourth succeeds.
    await until(async () => expect((await jobs.find(id))?.state).toBe('completed'), 15_000);
    expect(recorder.of('cli-1')).toHaveLength(4);

    const again = await runCli(t.databaseEnv, 'jobs:retry', '--id', id);
    expect(again.json.jobs).toEqual([{ id, outcome: 'not failed', state: 'completed' }]);
  }, 60_000);

  it('answers the CLI clearly about unknown jobs, queues and flags', async () => {
    const missing = await runCli(t.databaseEnv, 'jobs:show', '--id', '00000000-0000-4000-8000-0000000000ff');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No job has the id 00000000-0000-4000-8000-0000000000ff');
    const badId = await runCli(t.databaseEnv, 'jobs:show', '--id', 'abc');
    expect(badId.code).toBe(2);
    expect(badId.stderr).toContain('must be a job id (a UUID), not "abc"');
    const badState = await runCli(t.databaseEnv, 'jobs:list', '--state', 'dead');
    expect(badState.code).toBe(2);
    const unknownQueue = await runCli(t.databaseEnv, 'jobs:list', '--queue', 'nope');
    expect(unknownQueue.code).toBe(2);
    expect(unknownQueue.stderr).toContain('No job queue is named "nope"; the queues are');
    const neither = await runCli(t.databaseEnv, 'jobs:retry');
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('Give --id (once or more) or --all-failed, not both');
  }, 60_000);

  it('retries a job that failed long ago, which the archiving of the queue must not take for finished', async () => {
    // The attempt after the retry outlasts a round of the queue's maintenance (every 5 s).
    const id = (await jobs.enqueue(WORK, { key: 'old-dead-1', failures: 3, slowMs: 8000 }))!;
    await until(async () => expect((await jobs.find(id))?.state).toBe('failed'), 30_000);
    // As if it had failed two hours ago (completed jobs leave the table after an hour).
    await t
      .get(DataSource)
      .query(`UPDATE pgboss.job SET completed_on = now() - interval '2 hours', start_after = now() - interval '2 hours' WHERE id = $1`, [
        id,
      ]);
    expect(await jobs.retry([id])).toEqual([{ id, outcome: 'retried' }]);
    await until(async () => expect(await jobs.find(id)).toMatchObject({ state: 'completed', archived: false }), 25_000);
    expect(recorder.of('old-dead-1')).toHaveLength(4);
  }, 60_000);

  it('reports the depth and age of each queue in /metrics', async () => {
    const metrics = await scrape();
    for (const name of [
      'agora_jobs_waiting',
      'agora_jobs_oldest_waiting_seconds',
      'agora_jobs_scheduled',
      'agora_jobs_active',
      'agora_jobs_dead',
    ]) {
      expect(metrics).toMatch(new RegExp(`^${name}\\{queue="test-work"\\} \\d`, 'm'));
    }
  });
});

import { DataSource } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { ENTITIES } from '../database/entities.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { WebhookSweeper } from './webhook-sweeper.js';

class FixedClock extends Clock {
  now(): Date {
    return new Date('2026-03-01T10:00:00Z');
  }
}

// The entities' metadata as TypeORM builds it (no connection): the sweeper derives its columns from it.
const metadata = new DataSource({ type: 'postgres', entities: ENTITIES });
beforeAll(() => (metadata as unknown as { buildMetadatas(): Promise<void> }).buildMetadatas());

/** A database whose transactions fail while `down`, and otherwise find `due` deliveries due. */
function database(state: { down: boolean; due: number; transactions: number }): DataSource {
  return {
    getMetadata: (entity: Parameters<DataSource['getMetadata']>[0]) => metadata.getMetadata(entity),
    // The probe for anything due, outside a transaction.
    query: async () => {
      if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return [{ due: state.due > 0 }];
    },
    transaction: async (work: (tx: unknown) => Promise<unknown>) => {
      state.transactions++;
      if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      const rows = Array.from({ length: Math.min(state.due, 100) }, (_, i) => ({ id: `d${i}`, attempts: 1 }));
      state.due -= rows.length;
      // The due deliveries; none stuck in `queued`.
      const tx = { query: async (text: string) => (text.includes("d.state = 'scheduled'") ? rows : []) };
      return work(tx);
    },
  } as unknown as DataSource;
}

describe('WebhookSweeper', () => {
  it('survives a database outage: the tick resolves, and the next one sweeps once the database answers', async () => {
    const state = { down: true, due: 3, transactions: 0 };
    const enqueued: unknown[] = [];
    const jobs = { enqueue: async (_kind: unknown, data: unknown) => enqueued.push(data) } as unknown as JobQueue;
    const sweeper = new WebhookSweeper(jobs, database(state), new FixedClock(), true, {
      jobs: { retryLimit: 0, retryDelaySeconds: 1, concurrency: 1 },
    });

    await expect(sweeper.tick()).resolves.toBeUndefined();
    await expect(sweeper.tick()).resolves.toBeUndefined();
    expect(enqueued).toEqual([]);

    state.down = false;
    await sweeper.tick();
    expect(enqueued).toEqual([0, 1, 2].map((i) => ({ deliveryId: `d${i}`, number: 2, trigger: 'automatic' })));
  });

  it('works through a backlog in batches of 100 within one tick, and stops taking work at shutdown', async () => {
    const state = { down: false, due: 250, transactions: 0 };
    const enqueued: unknown[] = [];
    const jobs = { enqueue: async (_kind: unknown, data: unknown) => enqueued.push(data) } as unknown as JobQueue;
    const sweeper = new WebhookSweeper(jobs, database(state), new FixedClock(), true, {
      jobs: { retryLimit: 0, retryDelaySeconds: 1, concurrency: 1 },
    });
    await sweeper.tick();
    expect(enqueued).toHaveLength(250);
    expect(state.transactions).toBe(4); // three batches, and the look for deliveries stuck in queued

    await sweeper.beforeApplicationShutdown();
    state.due = 5;
    await sweeper.tick();
    expect(state.transactions).toBe(4);
  });
});

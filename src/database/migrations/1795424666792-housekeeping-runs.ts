import { MigrationInterface, QueryRunner } from 'typeorm';

/** The last run of each housekeeping job, shared by the instances: one of them runs it per interval. */
export class HousekeepingRuns1795424666792 implements MigrationInterface {
  name = 'HousekeepingRuns1795424666792';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE "housekeeping_runs" ("job" text NOT NULL, "started_at" TIMESTAMP WITH TIME ZONE NOT NULL, "finished_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "housekeeping_runs_pkey" PRIMARY KEY ("job"))',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "housekeeping_runs"');
  }
}

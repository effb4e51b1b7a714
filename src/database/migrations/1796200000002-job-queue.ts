import PgBoss from 'pg-boss';
import { MigrationInterface, QueryRunner } from 'typeorm';

/** The schema of the job queue, in pg-boss's own words: its tables, types and functions, in schema `pgboss`. */
export const JOB_SCHEMA = 'pgboss';

/**
 * The job queue's tables (pg-boss 10, schema version 24: src/jobs/). pg-boss's construction plan is
 * its own transaction (BEGIN … COMMIT, under an advisory lock of its own), so this migration runs
 * outside TypeORM's; it does nothing when the schema is already there (a crash between that COMMIT
 * and TypeORM's record of this migration). pg-boss itself never migrates (`migrate: false`): an
 * upgrade of pg-boss that changes its schema comes with a migration here, from its migration plans.
 */
export class JobQueue1796200000002 implements MigrationInterface {
  name = 'JobQueue1796200000002';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    const [{ present }] = (await q.query(`SELECT to_regclass('${JOB_SCHEMA}.version') IS NOT NULL AS present`)) as { present: boolean }[];
    if (!present) await q.query(PgBoss.getConstructionPlans(JOB_SCHEMA));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP SCHEMA IF EXISTS ${JOB_SCHEMA} CASCADE`);
  }
}

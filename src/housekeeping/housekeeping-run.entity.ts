import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The last run of each housekeeping job, shared by every instance: the row decides which instance runs next. */
@Entity({ name: 'housekeeping_runs' })
export class HousekeepingRunEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'housekeeping_runs_pkey' })
  job: string;

  /** When an instance claimed the latest run. */
  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  /** When that run finished; null while it runs, or if it failed. */
  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}

import { DynamicModule, Module } from '@nestjs/common';
import { DatabaseModule } from '../database/database.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { JobQueue } from './job-queue.js';
import { RequestLoad } from './request-load.js';
import { JOBS_WORK } from './jobs.tokens.js';

/** Whether this process runs jobs, as `JobsModule.forRoot` was given it; known to this file only. */
const JOBS_ROOT = Symbol('JOBS_ROOT');

/** The root half, configured once per process (`JobsModule.forRoot`): global as `DatabaseModule.forRoot`'s, exporting only that flag. */
@Module({})
class JobsRootModule {}

/**
 * The job queue, in the service's database. A feature that enqueues (in its own transactions) or
 * registers handlers (`JobQueue.handle`) imports `JobsModule`; `AppModule` and the CLI add
 * `JobsModule.forRoot({ work })` once. `work`: the server's processes run jobs; the CLI only enqueues.
 */
@Module({
  imports: [DatabaseModule, MetricsModule],
  providers: [{ provide: JOBS_WORK, inject: [JOBS_ROOT], useFactory: (work: boolean) => work }, JobQueue, RequestLoad],
  exports: [JOBS_WORK, JobQueue, RequestLoad],
})
export class JobsModule {
  static forRoot({ work }: { work: boolean }): DynamicModule {
    return {
      module: JobsRootModule,
      global: true,
      providers: [{ provide: JOBS_ROOT, useValue: work }],
      exports: [JOBS_ROOT],
    };
  }
}

import { DynamicModule, Global, Module } from '@nestjs/common';
import { JobQueue } from './job-queue.js';
import { RequestLoad } from './request-load.js';
import { JOBS_WORK } from './jobs.tokens.js';

/**
 * The job queue. Global like the database it lives in: any feature enqueues in its own transactions
 * and registers its handlers (`JobQueue.handle`). `work`: the server's processes run jobs; the CLI only enqueues.
 */
@Global()
@Module({})
export class JobsModule {
  static forRoot({ work }: { work: boolean }): DynamicModule {
    return {
      module: JobsModule,
      providers: [{ provide: JOBS_WORK, useValue: work }, JobQueue, RequestLoad],
      exports: [JOBS_WORK, JobQueue, RequestLoad],
    };
  }
}

import { Module } from '@nestjs/common';
import { SecurityNotices } from './security-notices.js';
import { JobsModule } from '../jobs/jobs.module.js';

/**
 * Security notices: the one place that enqueues them, low in the module graph so that sign-in, the
 * dashboard, OAuth and the CLI can all tell a user what happened without depending on mail.
 */
@Module({
  imports: [JobsModule],
  providers: [SecurityNotices],
  exports: [SecurityNotices],
})
export class SecurityNoticesModule {}

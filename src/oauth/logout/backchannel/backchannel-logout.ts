import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { Clock } from '../../../clock/clock.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import type { AppConfig } from '../../../config/config.schema.js';
import { EntityTable } from '../../../database/entity-table.js';
import { JobQueue } from '../../../jobs/job-queue.js';
import { jobKind } from '../../../jobs/job-kind.js';
import { SessionEndings, SessionEndingListener } from '../../../sessions/session-endings.js';
import { ApplicationEntity } from '../../clients/application.entity.js';
import { IdTokenService } from '../../keys/id-token.service.js';
import { BackchannelTransport } from './backchannel-transport.js';
import { logoutTokenClaims } from './logout-token.js';
import { SessionClientEntity } from './session-client.entity.js';
import { SessionIds } from './session-ids.js';
import { Subjects } from '../../subjects/subjects.js';

/** One logout token to deliver: to this application, for this user's ended session. */
export interface BackchannelLogoutJob {
  applicationId: string;
  userId: string;
  sessionId: string;
}

/**
 * A delivery waits mostly on the client's server (at most 10 s), so as many run at once as webhook
 * attempts do; a failed one is retried with the job queue's backoff (JOBS_RETRY_LIMIT, JOBS_RETRY_DELAY_SECONDS).
 */
export const BACKCHANNEL_LOGOUT = jobKind<BackchannelLogoutJob>('oidc-backchannel-logout', {
  expireInSeconds: 30,
  concurrency: (config) => config.webhooks.concurrency,
});

/** PostgreSQL's foreign_key_violation: the session ended between the code's approval and its exchange. */
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * OpenID Connect Back-Channel Logout 1.0. Each id_token issued with a `sid` to an application that
 * registered a `backchannel_logout_uri` is remembered (oauth_session_clients); when that session ends
 * (SessionEndings: signing out, RP-initiated logout, a session ended from the security page, a password
 * change or reset, the user blocked, the session expired and purged by housekeeping), one job per application is written in the same transaction, and the job posts a logout token
 * (a JWT signed as id_tokens are) to the application, retried until it answers 2xx. The request goes
 * through the webhooks' outbound client (BackchannelTransport): private addresses are refused.
 */
@Injectable()
export class BackchannelLogout implements OnModuleInit, SessionEndingListener {
  private readonly logger = new Logger('BackchannelLogout');
  private readonly sessionClients: EntityTable<SessionClientEntity>;
  private readonly recordSql: string;
  private readonly endingSql: string;

  constructor(
    private readonly jobs: JobQueue,
    private readonly endings: SessionEndings,
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(ApplicationEntity) private readonly applications: Repository<ApplicationEntity>,
    private readonly idTokens: IdTokenService,
    private readonly transport: BackchannelTransport,
    private readonly sessionIds: SessionIds,
    private readonly subjects: Subjects,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.sessionClients = EntityTable.of(dataSource, SessionClientEntity, 'sc');
    const apps = EntityTable.of(dataSource, ApplicationEntity, 'a');
    this.recordSql = `INSERT INTO oauth_session_clients (${this.sessionClients.list('sessionId', 'applicationId', 'userId', 'createdAt')})
      VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`;
    this.endingSql = `SELECT ${this.sessionClients.select} FROM oauth_session_clients sc
      JOIN oauth_applications a ON a.id = sc.${this.sessionClients.column('applicationId')}
     WHERE sc.${this.sessionClients.column('sessionId')} = ANY($1::uuid[]) AND a.${apps.column('backchannelLogoutUri')} IS NOT NULL`;
  }

  onModuleInit(): void {
    this.endings.accept(this);
    this.jobs.handle(BACKCHANNEL_LOGOUT, (job) => this.deliver(job));
  }

  /** The `sid` of the id_tokens issued in this session. */
  sidOf(sessionId: string): string {
    return this.sessionIds.sidOf(sessionId);
  }

  /** The application got an id_token with the session's `sid`: it will be told when the session ends. */
  async remember(sessionId: string, applicationId: string, userId: string): Promise<void> {
    try {
      await this.dataSource.query(this.recordSql, [sessionId, applicationId, userId, this.clock.now()]);
    } catch (err) {
      // The session has already ended: there is nothing left to log out of.
      if ((err as { code?: string }).code !== FOREIGN_KEY_VIOLATION) throw err;
    }
  }

  /** SessionEndings: one job per application to tell, in the transaction that ends the sessions. */
  async sessionsEnding(sessionIds: readonly string[], tx: EntityManager): Promise<void> {
    const rows = (await tx.query(this.endingSql, [sessionIds])) as object[];
    for (const row of rows.map((r) => this.sessionClients.map(r))) {
      await this.jobs.enqueue(
        BACKCHANNEL_LOGOUT,
        { applicationId: row.applicationId, userId: row.userId, sessionId: row.sessionId },
        { tx },
      );
    }
  }

  /** Posts the logout token (§2.5); anything but a 2xx fails the attempt, and the job queue tries again. */
  private async deliver(job: BackchannelLogoutJob): Promise<void> {
    const application = await this.applications.findOneBy({ id: job.applicationId });
    // Deleted, or no longer listening: nobody to tell.
    if (!application?.backchannelLogoutUri) return;
    const token = await this.idTokens.signLogoutToken(
      logoutTokenClaims({
        issuer: this.config.baseUrl,
        clientId: application.clientId,
        sub: this.subjects.of(application, job.userId),
        sid: this.sessionIds.sidOf(job.sessionId),
        now: this.clock.now(),
      }),
      application.idTokenSignedResponseAlg,
    );
    const result = await this.transport.post(application.backchannelLogoutUri, new URLSearchParams({ logout_token: token }));
    if (!result.succeeded) {
      const why = result.status !== null ? `HTTP ${result.status}` : (result.error ?? 'no answer');
      this.logger.warn(`Back-channel logout of client ${application.clientId} failed (${why}); it will be retried`);
      throw new Error(`Back-channel logout to ${application.backchannelLogoutUri} failed: ${why}`);
    }
  }
}

import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AccountLinks } from '../account-links/account-links.service.js';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { ApplicationsService } from '../oauth/clients/applications.service.js';
import { ClientAssertionVerifier } from '../oauth/clients/client-assertion.js';
import { AuthorizationCodesService } from '../oauth/authorize/authorization-codes.service.js';
import { RefreshTokensService } from '../oauth/tokens/refresh-tokens.service.js';
import { DeviceAuthorizationsService } from '../oauth/device/device-authorizations.service.js';
import { KNOWN_BROWSER_RETENTION_MS, KnownBrowsers } from '../sessions/known-browsers.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { AttemptThrottle } from '../sessions/attempt-throttle.js';
import { SignInSteps } from '../sessions/sign-in-steps.js';
import { PasskeysService } from '../passkeys/passkeys.service.js';
import { WebhookUpkeep } from '../webhooks/webhook-upkeep.js';
import { HousekeepingRunEntity } from './housekeeping-run.entity.js';

const JOB = 'purge-expired';

export interface Purged {
  sessions: number;
  codes: number;
  accessTokens: number;
  refreshTokens: number;
  deviceCodes: number;
  /** Applications registered dynamically, never claimed and never used (OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS). */
  unclaimedApplications: number;
  /** Browsers nobody signed in from for a year (a user's most recent one is kept). */
  knownBrowsers: number;
  /** Webhook messages older than 30 days, with their deliveries and attempts (the delivery log). */
  webhookMessages: number;
}

/**
 * Deletes expired sessions, authorization codes, access and refresh tokens, device codes, sign-in failures, pending sign-ins and
 * passkey challenges, browsers unseen for a year, and webhook messages (the delivery log) after 30 days, so tables stay small, and unclaimed applications nobody used, so that dynamic
 * registration does not stay closed at its cap: once per
 * interval for all the instances sharing the database, not once per instance.
 */
@Injectable()
export class HousekeepingService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(HousekeepingService.name);
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly sessions: SessionsService,
    private readonly codes: AuthorizationCodesService,
    private readonly refreshTokens: RefreshTokensService,
    private readonly deviceCodes: DeviceAuthorizationsService,
    private readonly applications: ApplicationsService,
    private readonly throttle: AttemptThrottle,
    private readonly browsers: KnownBrowsers,
    private readonly signInSteps: SignInSteps,
    private readonly passkeys: PasskeysService,
    private readonly accountLinks: AccountLinks,
    private readonly webhooks: WebhookUpkeep,
    private readonly clientAssertions: ClientAssertionVerifier,
    @InjectRepository(HousekeepingRunEntity) private readonly runs: Repository<HousekeepingRunEntity>,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    // Every instance looks four times an interval; the claim lets one of them run. So the fleet runs
    // between one and one and a quarter intervals apart, whichever instances are up.
    this.timer = setInterval(() => void this.runIfDue(), this.config.housekeepingIntervalMs / 4);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Runs housekeeping unless some instance started it less than an interval ago; null when it did not run. */
  async runIfDue(): Promise<Purged | null> {
    try {
      if (!(await this.claim())) return null;
    } catch (err) {
      this.logger.warn(`Housekeeping skipped: ${(err as Error).message}`);
      return null;
    }
    const purged = await this.run();
    if (!purged) return null;
    await this.runs.update({ job: JOB }, { finishedAt: this.clock.now() }).catch(() => undefined);
    this.logger.log(
      `Housekeeping ran: purged ${purged.sessions} sessions, ${purged.codes} codes, ${purged.accessTokens} access tokens, ${purged.refreshTokens} refresh tokens, ${purged.deviceCodes} device codes, ${purged.knownBrowsers} known browsers, ${purged.webhookMessages} webhook messages, ${purged.unclaimedApplications} unclaimed applications`,
    );
    return purged;
  }

  /** Deletes what has expired, now, whatever other instances do (the deletes are idempotent); null when it failed. */
  async run(): Promise<Purged | null> {
    try {
      const sessions = await this.sessions.purgeExpired();
      const refreshTokens = await this.refreshTokens.purgeExpired();
      const { codes, accessTokens } = await this.codes.purgeExpired();
      const deviceCodes = await this.deviceCodes.purgeExpired();
      await this.clientAssertions.purgeExpired();
      await this.throttle.purgeExpired();
      const knownBrowsers = await this.browsers.purgeUnseen(new Date(this.clock.now().getTime() - KNOWN_BROWSER_RETENTION_MS));
      await this.signInSteps.purgeExpired();
      await this.passkeys.purgeExpiredChallenges();
      await this.accountLinks.purgeExpired();
      const webhookMessages = await this.webhooks.purgeOld();
      // Last, so that an application whose codes and tokens were all purged above counts as unused now.
      const registeredBefore = new Date(this.clock.now().getTime() - this.config.oauth.unclaimedApplicationTtlMs);
      const unclaimedApplications = await this.applications.purgeUnusedUnclaimed(registeredBefore);
      return { sessions, codes, accessTokens, refreshTokens, deviceCodes, unclaimedApplications, knownBrowsers, webhookMessages };
    } catch (err) {
      this.logger.warn(`Housekeeping failed: ${(err as Error).message}`);
      return null;
    }
  }

  /**
   * Takes this interval's run for this instance. One statement decides among instances claiming at
   * once: the row lock makes them queue, and each re-checks `started_at` after the one before it
   * committed, so only the first moves it.
   */
  private async claim(): Promise<boolean> {
    const now = this.clock.now();
    const rows: unknown[] = await this.runs.query(
      `INSERT INTO housekeeping_runs AS r (job, started_at) VALUES ($1, $2)
       ON CONFLICT (job) DO UPDATE SET started_at = excluded.started_at, finished_at = NULL
       WHERE r.started_at <= $3
       RETURNING r.job`,
      [JOB, now, new Date(now.getTime() - this.config.housekeepingIntervalMs)],
    );
    return rows.length === 1;
  }
}

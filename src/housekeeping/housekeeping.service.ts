import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AuthorizationCodesService } from '../oauth/authorization-codes.service.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { SignInThrottle } from '../sessions/sign-in-throttle.js';

const INTERVAL_MS = 3_600_000;

/** Deletes expired sessions, authorization codes, access tokens and sign-in failures every hour, so tables stay small. */
@Injectable()
export class HousekeepingService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(HousekeepingService.name);
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly sessions: SessionsService,
    private readonly codes: AuthorizationCodesService,
    private readonly throttle: SignInThrottle,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.run(), INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async run(): Promise<{ sessions: number; codes: number; accessTokens: number }> {
    try {
      const sessions = await this.sessions.purgeExpired();
      const { codes, accessTokens } = await this.codes.purgeExpired();
      await this.throttle.purgeExpired();
      if (sessions + codes + accessTokens > 0)
        this.logger.log(`Purged ${sessions} sessions, ${codes} codes, ${accessTokens} access tokens`);
      return { sessions, codes, accessTokens };
    } catch (err) {
      this.logger.warn(`Housekeeping failed: ${(err as Error).message}`);
      return { sessions: 0, codes: 0, accessTokens: 0 };
    }
  }
}

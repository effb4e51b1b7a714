import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { Repository } from 'typeorm';
import { hashSecret } from '../auth/secret-token.js';
import { Clock } from '../clock/clock.js';
import { purgeInBatches } from '../database/batched-purge.js';
import { EntityTable } from '../database/entity-table.js';
import type { WebCookies } from '../web/cookies.js';
import type { CookieChange } from '../web/page-result.js';
import { Redirect } from '../web/page-result.js';
import { WEB_COOKIES } from '../web/web.tokens.js';
import { AuthMethod, combineAmr, toAmr } from '../auth/authentication-methods.js';
import { PendingSignInEntity } from './pending-sign-in.entity.js';
import { SessionsService } from './sessions.service.js';
import { WebSession } from './web-session.js';

/** How long the second step may take after the password. */
export const PENDING_SIGN_IN_TTL_MS = 10 * 60_000;
/** Wrong codes one pending sign-in takes before it ends and the password is asked again (as GitHub does). */
export const PENDING_SIGN_IN_MAX_FAILURES = 5;
/** The page of the second step. */
export const SECOND_STEP_PATH = '/sign-in/second-factor';

/** What a class of authentication a pending sign-in must reach: any second factor, or a passkey (phishing-resistant). */
export type SecondStepRequirement = 'aal2' | 'phr';

/** A sign-in waiting for its second step, as the browser that holds it may continue it. */
export interface PendingSignIn {
  id: string;
  userId: string;
  /** The methods proved so far: `['pwd']` after the password; a step-up: the session's. */
  amr: AuthMethod[];
  /** Where the browser goes once the step succeeds (already a safe local path). */
  returnTo: string;
  /** A step-up of this signed-in session; null: a new sign-in, no session yet. */
  stepUpSessionId: string | null;
  require: SecondStepRequirement;
}

const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

/**
 * How every sign-in finishes (docs/account-security.md, "Two-factor authentication"). A user with a
 * second factor gets, after the password, a pending sign-in held by a cookie of its own and no session;
 * the second step (`/sign-in/second-factor`: a code, a recovery code, a passkey) completes it. A signed-in
 * session an application wants more of (acr_values) is stepped up the same way. Every completed sign-in,
 * whatever its steps, goes through `signIn` and so through `WebSession.signIn`.
 */
@Injectable()
export class SignInSteps {
  constructor(
    @InjectRepository(PendingSignInEntity) private readonly pendings: Repository<PendingSignInEntity>,
    private readonly session: WebSession,
    private readonly sessions: SessionsService,
    private readonly clock: Clock,
    @Inject(WEB_COOKIES) private readonly cookies: WebCookies,
  ) {
    this.waiting = new EntityTable<PendingSignInEntity>(pendings.metadata, 'p').pick(
      'id',
      'userId',
      'amr',
      'returnTo',
      'stepUpSessionId',
      'require',
    );
  }

  /** What a pending sign-in is read as. */
  private readonly waiting: EntityTable<Pick<PendingSignInEntity, keyof PendingSignIn>, PendingSignInEntity>;

  /**
   * Starts a second step: after the password (`amr` `['pwd']`), or for a signed-in session an application
   * asks more of (`stepUpSessionId`, its `amr`). Answers the redirect to the second step's page, which
   * carries the cookie that holds it; any pending sign-in the browser held before ends.
   */
  async begin(
    req: FastifyRequest,
    userId: string,
    amr: AuthMethod[],
    returnTo: string,
    options: { stepUpSessionId?: string; require?: SecondStepRequirement } = {},
  ): Promise<Redirect> {
    await this.forget(req);
    const cookieValue = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + PENDING_SIGN_IN_TTL_MS);
    await this.pendings.insert({
      tokenHash: hashSecret(cookieValue),
      userId,
      amr,
      returnTo,
      stepUpSessionId: options.stepUpSessionId ?? null,
      require: options.require ?? 'aal2',
      createdAt: now,
      expiresAt,
    });
    const cookie: CookieChange = {
      name: this.cookies.pendingSignIn,
      value: cookieValue,
      options: this.cookies.options('lax', { expires: expiresAt }),
    };
    return new Redirect(SECOND_STEP_PATH, 303, { cookies: [cookie] });
  }

  /**
   * The browser's pending sign-in, or null: none, expired, its user blocked since, or a step-up whose
   * session is no longer the browser's.
   */
  async pending(req: FastifyRequest): Promise<PendingSignIn | null> {
    const value = req.cookies[this.cookies.pendingSignIn];
    if (!value || !COOKIE_VALUE.test(value)) return null;
    const session = req.cookies[this.cookies.session];
    const rows: object[] = await this.pendings.query(
      `SELECT ${this.waiting.select}
           FROM pending_sign_ins p JOIN users u ON u.id = p.user_id AND u.state = 'active'
          WHERE p.token_hash = $1 AND p.expires_at > $2
            AND (p.step_up_session_id IS NULL
                 OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = p.step_up_session_id AND s.token_hash = $3 AND s.expires_at > $2))`,
      [hashSecret(value), this.clock.now(), session ? hashSecret(session) : ''],
    );
    if (!rows[0]) return null;
    const row = this.waiting.map(rows[0]);
    return { ...row, amr: toAmr(row.amr) };
  }

  /**
   * The second step succeeded with these methods: the pending sign-in ends (once: of two concurrent
   * completions only one goes on), and the browser is signed in with every method so far, or its session
   * stepped up (new `amr`, `auth_time` now); then 303 to where it was going. A pending sign-in that ended
   * meanwhile sends the browser back to the password.
   */
  async complete(req: FastifyRequest, pending: PendingSignIn, methods: AuthMethod[]): Promise<Redirect> {
    const ended: unknown[] = await this.pendings.query(
      `WITH ended AS (DELETE FROM pending_sign_ins WHERE id = $1 AND expires_at > $2 RETURNING id) SELECT id FROM ended`,
      [pending.id, this.clock.now()],
    );
    if (ended.length === 0) return this.startAgain(pending.returnTo);
    const amr = combineAmr(pending.amr, methods);
    if (pending.stepUpSessionId) {
      await this.sessions.stepUp(pending.stepUpSessionId, amr);
      return new Redirect(pending.returnTo, 303, { cookies: [this.clearCookie()] });
    }
    return this.signIn(req, pending.userId, amr, pending.returnTo);
  }

  /**
   * The one way a sign-in finishes, whatever its steps (a password alone, a passkey alone, a second
   * step): a new session with these methods (`combineAmr` already applied), through
   * `WebSession.signIn`, and 303 to `returnTo` (a safe local path).
   */
  async signIn(req: FastifyRequest, userId: string, amr: AuthMethod[], returnTo: string): Promise<Redirect> {
    const cookies = await this.session.signIn(req, userId, amr);
    if (req.cookies[this.cookies.pendingSignIn]) cookies.push(this.clearCookie());
    return new Redirect(returnTo, 303, { cookies });
  }

  /**
   * Counts a wrong code against the pending sign-in; true when that was one too many and it ended
   * (the caller sends the browser back to the password: `startAgain`).
   */
  async failed(pending: PendingSignIn): Promise<boolean> {
    const rows: { failures: number }[] = await this.pendings.query(
      `WITH counted AS (UPDATE pending_sign_ins SET failures = failures + 1 WHERE id = $1 RETURNING failures) SELECT failures FROM counted`,
      [pending.id],
    );
    const failures = rows[0]?.failures;
    if (failures !== undefined && failures < PENDING_SIGN_IN_MAX_FAILURES) return false;
    await this.pendings.delete({ id: pending.id });
    return true;
  }

  /** Back to the start: the password page for a new sign-in (the pending cookie cleared). */
  startAgain(returnTo: string, notice = 'Your sign-in expired. Please sign in again.'): Redirect {
    return new Redirect(`/sign-in?return_to=${encodeURIComponent(returnTo)}`, 303, {
      cookies: [this.clearCookie()],
      flash: { path: '/sign-in', notice },
    });
  }

  /** Whether the browser still carries a pending sign-in's cookie (its sign-in may have expired since). */
  holdsCookie(req: FastifyRequest): boolean {
    return req.cookies[this.cookies.pendingSignIn] !== undefined;
  }

  /** Ends the browser's pending sign-in, if any (a new one starts, or the user cancels). */
  async forget(req: FastifyRequest): Promise<void> {
    const value = req.cookies[this.cookies.pendingSignIn];
    if (value && COOKIE_VALUE.test(value)) await this.pendings.delete({ tokenHash: hashSecret(value) });
  }

  clearCookie(): CookieChange {
    return { name: this.cookies.pendingSignIn, value: null, options: this.cookies.options('lax') };
  }

  /** Deletes pending sign-ins past their expiry; returns how many. */
  async purgeExpired(): Promise<number> {
    return purgeInBatches((text, values) => this.pendings.query(text, values), 'pending_sign_ins', 't.expires_at <= $1', [
      this.clock.now(),
    ]);
  }
}

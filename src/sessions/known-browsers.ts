import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyRequest } from 'fastify';
import { createHash, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { purgeInBatches } from '../database/batched-purge.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import type { WebCookies } from '../web/cookies.js';
import type { CookieChange } from '../web/page-result.js';
import { WEB_COOKIES } from '../web/web.tokens.js';
import { describeBrowser } from './browser-description.js';

/** The most browsers remembered per user; the least recently used go first (a shared or wiped computer comes back as new). */
export const KNOWN_BROWSERS_PER_USER = 50;
/** A browser not used to sign in for this long is forgotten by housekeeping (but never a user's last one). */
export const KNOWN_BROWSER_RETENTION_MS = 365 * 24 * 3_600_000;
/** How long the device cookie lives: 400 days, the most today's browsers keep a cookie; renewed at every sign-in. */
const DEVICE_COOKIE_MS = 400 * 24 * 3_600_000;
/** 32 random bytes, base64url. */
const DEVICE_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * The browsers each user signs in from, told apart by a long-lived random cookie of their own (the
 * `agora_device` cookie: HttpOnly, SameSite=Lax, `__Host-` under https). A sign-in from a browser the
 * account has not used before raises the `new-browser` security notice, as GitHub and GitLab do; the
 * first browser an account is ever seen in (sign-up, the first sign-in of an account an operator made)
 * is learned without one.
 */
@Injectable()
export class KnownBrowsers {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(WEB_COOKIES) private readonly cookies: WebCookies,
    private readonly notices: SecurityNotices,
    private readonly clock: Clock,
  ) {}

  /**
   * Records that `userId` signed in from this browser, and tells them if it is a browser their account
   * was not used in before. Returns the device cookie to set (new, or the same one renewed). Called by
   * WebSession.signIn, which every completed sign-in goes through, before the new session exists.
   */
  async noteSignIn(req: FastifyRequest, userId: string): Promise<CookieChange[]> {
    const presented = req.cookies[this.cookies.device];
    const deviceId = presented && DEVICE_ID.test(presented) ? presented : randomBytes(32).toString('base64url');
    const deviceHash = createHash('sha256').update(deviceId).digest('hex');
    const now = this.clock.now();
    const browser = describeBrowser(req.headers['user-agent'] ?? null).slice(0, 100);
    await this.dataSource.transaction(async (tx) => {
      // One sign-in of the user at a time decides what is new: two first sign-ins at once cannot both be "the first".
      await tx.query('SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE', [userId]);
      const [known] = (await tx.query(
        `SELECT count(*)::int AS browsers,
                count(*) FILTER (WHERE device_hash = $2)::int AS this_one,
                EXISTS (SELECT 1 FROM sessions WHERE user_id = $1 AND expires_at > $3) AS signed_in
           FROM known_browsers WHERE user_id = $1`,
        [userId, deviceHash, now],
      )) as [{ browsers: number; this_one: number; signed_in: boolean }];
      await tx.query(
        `INSERT INTO known_browsers (user_id, device_hash, browser, first_seen_at, last_seen_at) VALUES ($1, $2, $3, $4, $4)
         ON CONFLICT (user_id, device_hash) DO UPDATE SET last_seen_at = excluded.last_seen_at, browser = excluded.browser`,
        [userId, deviceHash, browser, now],
      );
      if (known.this_one > 0) return;
      await tx.query(
        `DELETE FROM known_browsers WHERE user_id = $1 AND device_hash IN (
           SELECT device_hash FROM known_browsers WHERE user_id = $1 ORDER BY last_seen_at DESC, first_seen_at DESC OFFSET $2)`,
        [userId, KNOWN_BROWSERS_PER_USER],
      );
      // An account's first browser is learned silently (sign-up), unless the account is signed in
      // elsewhere already: an account older than this table has sessions but no known browser yet.
      if (known.browsers === 0 && !known.signed_in) return;
      await this.notices.notify(userId, { kind: 'new-browser', browser, ip: req.ip, at: now.toISOString() }, { tx });
    });
    return [
      {
        name: this.cookies.device,
        value: deviceId,
        options: this.cookies.options('lax', { expires: new Date(now.getTime() + DEVICE_COOKIE_MS) }),
      },
    ];
  }

  /**
   * Forgets browsers not used to sign in since `before`, except each user's most recent one: an account
   * that was away for a year still knows it has signed in before, and hears about the next new browser.
   */
  async purgeUnseen(before: Date): Promise<number> {
    return purgeInBatches(
      (text, values) => this.dataSource.query(text, values),
      'known_browsers',
      't.last_seen_at < $1 AND EXISTS (SELECT 1 FROM known_browsers n WHERE n.user_id = t.user_id AND n.last_seen_at > t.last_seen_at)',
      [before],
    );
  }
}

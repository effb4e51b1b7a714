import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { Repository } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { purgeInBatches } from '../database/batched-purge.js';
import { ChallengePurpose, WebAuthnChallengeEntity } from './webauthn-challenge.entity.js';

/** How long a page's passkey request may be answered: long enough to find a security key, short enough to be useless later. */
export const CHALLENGE_TTL_MS = 10 * 60_000;

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** A challenge taken back for verification: it can no longer be used. */
export interface UsedChallenge {
  challenge: string;
  userId: string | null;
}

/**
 * The challenges of passkey ceremonies, kept server-side: each is issued with the options a page hands
 * to the browser, bound to what it was issued for, and deleted as it is used. A response is checked
 * against the challenge its own signed client data names only once that challenge was found here,
 * unused, unexpired and issued for this purpose and this binding: the browser never chooses it.
 */
@Injectable()
export class WebAuthnChallenges {
  constructor(
    @InjectRepository(WebAuthnChallengeEntity) private readonly challenges: Repository<WebAuthnChallengeEntity>,
    private readonly clock: Clock,
  ) {}

  async issue(purpose: ChallengePurpose, boundTo: string, userId: string | null = null): Promise<string> {
    const challenge = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    await this.challenges.insert({
      challenge,
      purpose,
      boundTo,
      userId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + CHALLENGE_TTL_MS),
    });
    return challenge;
  }

  /**
   * Uses the challenge: deleted whatever comes next (a failed verification burns it too), returned only
   * if it was issued for this purpose and binding and has not expired. One statement: two requests
   * racing with the same challenge cannot both get it.
   */
  async use(challenge: string, purpose: ChallengePurpose, boundTo: string): Promise<UsedChallenge | null> {
    if (!CHALLENGE.test(challenge)) return null;
    // Ends in a SELECT: the embedded database's driver answers a bare DELETE … RETURNING with its row count beside the rows.
    const rows: { user_id: string | null; purpose: string; bound_to: string; expires_at: Date }[] = await this.challenges.query(
      `WITH used AS (DELETE FROM webauthn_challenges WHERE challenge = $1 RETURNING user_id, purpose, bound_to, expires_at)
       SELECT user_id, purpose, bound_to, expires_at FROM used`,
      [challenge],
    );
    const row = rows[0];
    if (!row || row.purpose !== purpose || row.bound_to !== boundTo) return null;
    if (new Date(row.expires_at).getTime() <= this.clock.now().getTime()) return null;
    return { challenge, userId: row.user_id };
  }

  async purgeExpired(): Promise<number> {
    return purgeInBatches((text, values) => this.challenges.query(text, values), 'webauthn_challenges', 't.expires_at <= $1', [
      this.clock.now(),
    ]);
  }
}

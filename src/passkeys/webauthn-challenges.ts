import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { Repository } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { purgeInBatches } from '../database/batched-purge.js';
import { EntityTable } from '../database/entity-table.js';
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
  ) {
    const used = EntityTable.of(challenges.manager.connection, WebAuthnChallengeEntity, 'c').pick(
      'userId',
      'purpose',
      'boundTo',
      'expiresAt',
    );
    this.used = used;
    // Ends in a SELECT: the embedded database's driver answers a bare DELETE … RETURNING with its row count beside the rows.
    this.useSql = `WITH used AS (DELETE FROM ${used.name} c WHERE c.${used.column('challenge')} = $1 RETURNING ${used.select})
       SELECT ${used.select} FROM used c`;
  }

  /** What using a challenge reads of it. */
  private readonly used: EntityTable<
    Pick<WebAuthnChallengeEntity, 'userId' | 'purpose' | 'boundTo' | 'expiresAt'>,
    WebAuthnChallengeEntity
  >;
  /** Deletes a challenge and returns it: one statement, so two requests racing with it cannot both get it. */
  private readonly useSql: string;

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
    const [found] = (await this.challenges.query(this.useSql, [challenge])) as object[];
    const row = found && this.used.map(found);
    if (!row || row.purpose !== purpose || row.boundTo !== boundTo) return null;
    if (new Date(row.expiresAt).getTime() <= this.clock.now().getTime()) return null;
    return { challenge, userId: row.userId };
  }

  async purgeExpired(): Promise<number> {
    return purgeInBatches((text, values) => this.challenges.query(text, values), 'webauthn_challenges', 't.expires_at <= $1', [
      this.clock.now(),
    ]);
  }
}

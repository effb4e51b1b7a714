import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { deriveKey } from '../config/key-encryption.js';
import { Clock } from '../clock/clock.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { RecoveryCodeEntity } from './recovery-code.entity.js';

/** Codes a user gets at once. */
export const RECOVERY_CODE_COUNT = 10;
/** 32 letters and digits without look-alikes (no i, l, o or 1): one per 5 random bits, read and typed easily. */
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz023456789';
const CODE = new RegExp(`^[${ALPHABET}]{10}$`);

/** A new recovery code: `xxxxx-xxxxx`, 50 random bits. */
function newCode(): string {
  const chars = [...randomBytes(10)].map((byte) => ALPHABET[byte & 31]!).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/** A code as typed (any case, spaces, with or without its dash) in its one stored form, or null when it cannot be one. */
export function normaliseRecoveryCode(typed: string): string | null {
  const chars = typed.toLowerCase().replace(/[\s-]/g, '');
  return CODE.test(chars) ? `${chars.slice(0, 5)}-${chars.slice(5)}` : null;
}

/** The page that shows new recovery codes once (they travel there in the one-time flash under this label). */
export const RECOVERY_CODES_PAGE = '/account/two-factor/recovery-codes';
export const RECOVERY_CODES_FLASH_LABEL = 'Recovery codes';

/**
 * Single-use recovery codes (docs/account-security.md): the way in when the authenticator app or the
 * passkeys are lost. Shown once when made, stored as HMAC-SHA256 digests (`digest`); a code is found
 * by its digest (no comparison of secrets in the application) and marked used in the same statement, so
 * two concurrent uses of one code cannot both pass.
 */
@Injectable()
export class RecoveryCodes {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly notices: SecurityNotices,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * What is stored of a code: HMAC-SHA256 under a key derived from SECRET_KEY, not a bare hash, since a code
   * has only 50 bits: a copy of the database alone cannot be searched offline for the codes.
   */
  private digest(code: string): string {
    if (!this.config.secretKey) throw new Error('SECRET_KEY is not resolved: recovery codes are keyed with it');
    return createHmac('sha256', deriveKey(this.config.secretKey, 'recovery-codes')).update(code).digest('hex');
  }

  /** Replaces the user's codes by ten new ones (the old stop working) and returns them: their only copy. */
  async replace(userId: string, tx: EntityManager): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newCode);
    const now = this.clock.now();
    await tx.delete(RecoveryCodeEntity, { userId });
    await tx.insert(
      RecoveryCodeEntity,
      codes.map((code) => ({ id: randomUUID(), userId, codeHash: this.digest(code), createdAt: now, usedAt: null })),
    );
    return codes;
  }

  /** New codes for a user who asked for them (the old ones stop working), with the security notice. */
  async regenerate(userId: string): Promise<string[]> {
    return this.dataSource.transaction(async (tx) => {
      const codes = await this.replace(userId, tx);
      await this.notices.notify(userId, { kind: 'recovery-codes-regenerated' }, { tx });
      return codes;
    });
  }

  /**
   * Uses one of the user's codes for the second step: true when it was theirs and unused, now marked
   * used (with the `recovery-code-used` notice saying how many are left); false otherwise.
   */
  async use(userId: string, typed: string): Promise<boolean> {
    const code = normaliseRecoveryCode(typed);
    if (!code) return false;
    return this.dataSource.transaction(async (tx) => {
      const used: unknown[] = await tx.query(
        `WITH used AS (
           UPDATE recovery_codes SET used_at = $3 WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING id)
         SELECT id FROM used`,
        [userId, this.digest(code), this.clock.now()],
      );
      if (used.length === 0) return false;
      const remaining = await this.left(userId, tx);
      await this.notices.notify(userId, { kind: 'recovery-code-used', remaining }, { tx });
      return true;
    });
  }

  /** Codes not used yet. */
  async left(userId: string, tx?: EntityManager): Promise<number> {
    return (tx ?? this.dataSource.manager).countBy(RecoveryCodeEntity, { userId, usedAt: IsNull() });
  }

  /** Deletes every code of the user (the last second factor went). */
  async removeAll(userId: string, tx: EntityManager): Promise<void> {
    await tx.delete(RecoveryCodeEntity, { userId });
  }
}

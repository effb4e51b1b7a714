import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { DataSource, EntityManager, In, IsNull, MoreThan } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { deriveKey } from '../config/key-encryption.js';
import { purgeInBatches } from '../database/batched-purge.js';
import { EntityTable } from '../database/entity-table.js';
import { JobQueue } from '../jobs/job-queue.js';
import { AccountLinkEntity, type LinkPurpose } from './account-link.entity.js';
import { ACCOUNT_MAIL } from './account-mail.job.js';

/** How long a link works: a day to verify an address (new or changed), an hour to reset a password. */
export const LINK_LIFETIME_MS: Record<LinkPurpose, number> = {
  'verify-email': 24 * 3600_000,
  'change-email': 24 * 3600_000,
  'reset-password': 3600_000,
};

/**
 * Where each kind of link leads, the token following in the query: request logs and traces keep no query
 * value they do not know (redactUrl), so the token is never logged.
 */
export const LINK_PATHS: Record<LinkPurpose, string> = {
  'verify-email': '/verify-email?token=',
  'change-email': '/verify-email?token=',
  'reset-password': '/reset-password?token=',
};

export interface AccountLink {
  id: string;
  userId: string;
  purpose: LinkPurpose;
  email: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

/** What a token is worth: a link to use, or why not (unknown or forged, used or replaced, expired). */
export type LinkLookup = { state: 'valid'; link: AccountLink } | { state: 'invalid' } | { state: 'used' } | { state: 'expired' };

const ID_CHARS = 22;
const TOKEN = /^[A-Za-z0-9_-]{65}$/;

/** A link as callers get it: a plain copy of the entity's columns. */
const toLink = (entity: AccountLink): AccountLink => ({
  id: entity.id,
  userId: entity.userId,
  purpose: entity.purpose,
  email: entity.email,
  createdAt: new Date(entity.createdAt),
  expiresAt: new Date(entity.expiresAt),
  usedAt: entity.usedAt ? new Date(entity.usedAt) : null,
});

/**
 * The links mailed to prove an address or reset a password. A link is a row (who, what for, which
 * address, until when, used when); its token is the row's id (22 base64url characters) followed by an
 * HMAC-SHA256 of the id, purpose, user and address under a key derived from SECRET_KEY (43 characters).
 * Nothing stored, in the table or in the mail job (which carries the id only), is enough to use a link:
 * the mail's sender computes the token when it sends. A link is used at most once: one UPDATE takes it,
 * so two browsers following it at once cannot both succeed.
 */
@Injectable()
export class AccountLinks {
  private readonly key: Buffer;
  /** The links' table as the conditional UPDATE reads it: its columns and row mapper from the entity. */
  private readonly table: EntityTable<AccountLinkEntity>;
  /** Takes a link that still works, for one caller only (its columns from the entity). */
  private readonly redeemSql: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly jobs: JobQueue,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    if (!config.secretKey) throw new Error('SECRET_KEY is not resolved: account links need it');
    this.key = deriveKey(config.secretKey, 'account-links');
    jobs.declare(ACCOUNT_MAIL);
    this.table = EntityTable.of(dataSource, AccountLinkEntity, 'l');
    const used = this.table.column('usedAt');
    this.redeemSql = `UPDATE ${this.table.name} l SET ${used} = $2
       WHERE l.${this.table.column('id')} = $1 AND l.${used} IS NULL AND l.${this.table.column('expiresAt')} > $2
       RETURNING ${this.table.select}`;
  }

  /**
   * A new link, mailed to `email` by a job enqueued in `tx` (the change it proves commits with it, or
   * neither does). Earlier unused links of the user for the same purpose stop working: only the newest counts.
   */
  async issue(tx: EntityManager, userId: string, purpose: LinkPurpose, email: string): Promise<AccountLink> {
    const now = this.clock.now();
    await this.endAll(tx, userId, [purpose]);
    const link: AccountLink = {
      id: randomUUID(),
      userId,
      purpose,
      email,
      createdAt: now,
      expiresAt: new Date(now.getTime() + LINK_LIFETIME_MS[purpose]),
      usedAt: null,
    };
    await tx.insert(AccountLinkEntity, { ...link });
    await this.jobs.enqueue(ACCOUNT_MAIL, { kind: 'link', linkId: link.id }, { tx });
    return link;
  }

  /** Ends the user's unused links of these purposes (a newer one, a reset, a change of address). */
  async endAll(tx: EntityManager, userId: string, purposes: LinkPurpose[]): Promise<void> {
    await tx.update(AccountLinkEntity, { userId, purpose: In(purposes), usedAt: IsNull() }, { usedAt: this.clock.now() });
  }

  /** The link as it is now, by id (the mail's sender). */
  async byId(id: string): Promise<AccountLink | null> {
    const found = await this.dataSource.manager.findOneBy(AccountLinkEntity, { id });
    return found ? toLink(found) : null;
  }

  /** The address of the user's pending change, if a change-of-address link still works. */
  async pendingChange(userId: string): Promise<{ email: string; expiresAt: Date } | null> {
    const found = await this.dataSource.manager.findOne(AccountLinkEntity, {
      where: { userId, purpose: 'change-email', usedAt: IsNull(), expiresAt: MoreThan(this.clock.now()) },
      order: { createdAt: 'DESC' },
    });
    return found ? { email: found.email, expiresAt: new Date(found.expiresAt) } : null;
  }

  /** The address a link works at: BASE_URL, the path of its purpose, the token. */
  url(link: AccountLink): string {
    return `${this.config.baseUrl}${LINK_PATHS[link.purpose]}${this.token(link)}`;
  }

  token(link: Pick<AccountLink, 'id' | 'userId' | 'purpose' | 'email'>): string {
    return Buffer.from(link.id.replaceAll('-', ''), 'hex').toString('base64url') + this.mac(link).toString('base64url');
  }

  /** What a token is worth now, without using it (the page that shows the link's form). */
  async look(token: string, purposes: LinkPurpose[]): Promise<LinkLookup> {
    const link = await this.find(this.dataSource.manager, token, purposes);
    if (!link) return { state: 'invalid' };
    if (link.usedAt) return { state: 'used' };
    if (link.expiresAt <= this.clock.now()) return { state: 'expired' };
    return { state: 'valid', link };
  }

  /**
   * Uses a link, in the caller's transaction: the one UPDATE that marks it used succeeds for one caller
   * only, and only while the link works. The link, or why it does not work.
   */
  async redeem(tx: EntityManager, token: string, purposes: LinkPurpose[]): Promise<LinkLookup> {
    const found = await this.find(tx, token, purposes);
    if (!found) return { state: 'invalid' };
    const now = this.clock.now();
    const [rows] = (await tx.query(this.redeemSql, [found.id, now])) as [object[], number];
    if (rows[0]) return { state: 'valid', link: toLink(this.table.map(rows[0])) };
    const again = await tx.findOneBy(AccountLinkEntity, { id: found.id });
    return again?.usedAt || found.usedAt ? { state: 'used' } : { state: 'expired' };
  }

  /** Deletes links expired a week ago or more (housekeeping); a used or expired link says so for that week. */
  async purgeExpired(): Promise<number> {
    return purgeInBatches((text, values) => this.dataSource.query(text, values), 'account_links', 't.expires_at <= $1', [
      new Date(this.clock.now().getTime() - 7 * 24 * 3600_000),
    ]);
  }

  private async find(manager: EntityManager, token: string, purposes: LinkPurpose[]): Promise<AccountLink | null> {
    if (!TOKEN.test(token)) return null;
    const hex = Buffer.from(token.slice(0, ID_CHARS), 'base64url').toString('hex');
    if (hex.length !== 32) return null;
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    const row = await manager.findOneBy(AccountLinkEntity, { id });
    if (!row || !purposes.includes(row.purpose)) return null;
    const link = toLink(row);
    const given = Buffer.from(token.slice(ID_CHARS), 'base64url');
    const expected = this.mac(link);
    return given.length === expected.length && timingSafeEqual(given, expected) ? link : null;
  }

  private mac(link: Pick<AccountLink, 'id' | 'userId' | 'purpose' | 'email'>): Buffer {
    return createHmac('sha256', this.key).update(`${link.id}\n${link.purpose}\n${link.userId}\n${link.email.toLowerCase()}`).digest();
  }
}

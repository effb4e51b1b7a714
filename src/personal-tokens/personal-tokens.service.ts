import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { CredentialVerifier, TokenVerifier } from '../auth/credential-verifier.js';
import { CredentialRow, Principal, toPrincipal } from '../auth/principal.js';
import { PERSONAL_TOKEN_SCOPES } from '../auth/scopes.js';
import { generateSecret, hashSecret, isWellFormedSecret, SecretPrefix } from '../auth/secret-token.js';
import { Clock } from '../clock/clock.js';
import { EntityTable } from '../database/entity-table.js';
import { isUuid } from '../database/uuid.js';
import { checkAll } from '../errors/domain-error.js';
import { APP_CONFIG } from '../config/config.module.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import type { AppConfig } from '../config/config.schema.js';
import { PersonalTokenEntity } from './personal-token.entity.js';
import { PersonalToken, toPersonalToken } from './personal-token.model.js';
import { PersonalTokenError } from './personal-tokens.errors.js';
import { UsersService } from '../users/users.service.js';

export interface NewPersonalTokenInput {
  name: string;
  scopes: string[];
  expiresAt?: Date | null;
}

const COUNT_ACTIVE_SQL = `
  SELECT count(*)::int AS active FROM personal_access_tokens
   WHERE user_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`;

@Injectable()
export class PersonalTokensService implements TokenVerifier, OnModuleInit {
  readonly prefix = SecretPrefix.personalAccessToken;
  private readonly logger = new Logger(PersonalTokensService.name);

  constructor(
    @InjectRepository(PersonalTokenEntity) private readonly tokens: Repository<PersonalTokenEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly verifier: CredentialVerifier,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly notices: SecurityNotices,
    private readonly users: UsersService,
  ) {
    this.table = EntityTable.of(dataSource, PersonalTokenEntity, 't').pick('id', 'userId', 'scopes', 'lastUsedAt', 'expiresAt');
    this.verifySql = `
  SELECT ${this.table.select}, ${users.claimsAs('u')}
  FROM personal_access_tokens t
  JOIN users u ON u.id = t.user_id
  WHERE t.token_hash = $1
    AND t.revoked_at IS NULL
    AND (t.expires_at IS NULL OR t.expires_at > $2)
    AND u.state = 'active'`;
  }

  /** The token's own columns that its verification reads. */
  private readonly table: EntityTable<
    Pick<PersonalTokenEntity, 'id' | 'userId' | 'scopes' | 'lastUsedAt' | 'expiresAt'>,
    PersonalTokenEntity
  >;
  /** The live token of a hash with the user's claims: one statement per authenticated request. */
  private readonly verifySql: string;

  onModuleInit(): void {
    this.verifier.register(this);
  }

  /**
   * Creates a token; the returned secret is the only time it is ever available. A user holds at most
   * PERSONAL_TOKENS_MAX_ACTIVE tokens that still work (TOO_MANY_TOKENS past it): counted and inserted
   * under a lock on the user's row, so concurrent creations never overshoot. The user's e-mail address
   * must be verified (EMAIL_NOT_VERIFIED). The owner is told by e-mail (a security notice written in the
   * same transaction).
   */
  async create(userId: string, input: NewPersonalTokenInput): Promise<{ token: string; personalToken: PersonalToken }> {
    await this.users.requireVerifiedEmail(userId);
    const { name, scopes, expiresAt } = checkAll({
      name: () => {
        const name = input.name.trim();
        if (name.length < 1 || name.length > 100) throw new PersonalTokenError('INVALID_NAME', 'Name must be 1 to 100 characters', 'name');
        return name;
      },
      scopes: () => {
        const scopes = [...new Set(input.scopes)];
        if (scopes.length === 0 || scopes.some((s) => !PERSONAL_TOKEN_SCOPES.includes(s as never))) {
          throw new PersonalTokenError('INVALID_SCOPES', `Scopes must be one or more of: ${PERSONAL_TOKEN_SCOPES.join(', ')}`, 'scopes');
        }
        return scopes;
      },
      expiresAt: () => {
        const expiresAt = input.expiresAt ?? null;
        if (expiresAt && (Number.isNaN(expiresAt.getTime()) || expiresAt <= this.clock.now())) {
          throw new PersonalTokenError('INVALID_EXPIRY', 'Expiry date must be in the future', 'expiresAt');
        }
        return expiresAt;
      },
    });
    const token = generateSecret(SecretPrefix.personalAccessToken);
    const now = this.clock.now();
    const entity = await this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE', [userId]);
      const [{ active }] = (await manager.query(COUNT_ACTIVE_SQL, [userId, now])) as [{ active: number }];
      const max = this.maxActive;
      if (active >= max) {
        throw new PersonalTokenError(
          'TOO_MANY_TOKENS',
          `You already have ${max} active personal access tokens, the most allowed: revoke one you no longer use, then create this one`,
        );
      }
      const tokens = manager.getRepository(PersonalTokenEntity);
      const saved = await tokens.save(tokens.create({ userId, name, scopes, expiresAt, tokenHash: hashSecret(token), createdAt: now }));
      await this.notices.notify(userId, { kind: 'personal-token-created', name, scopes }, { tx: manager });
      return saved;
    });
    return { token, personalToken: toPersonalToken(entity) };
  }

  /** How many tokens count against the user's PERSONAL_TOKENS_MAX_ACTIVE now: neither revoked nor expired, as create counts them. */
  async countActive(userId: string): Promise<number> {
    const [{ active }] = (await this.dataSource.query(COUNT_ACTIVE_SQL, [userId, this.clock.now()])) as [{ active: number }];
    return active;
  }

  /** The most active tokens a user may hold (PERSONAL_TOKENS_MAX_ACTIVE), for the pages that say so. */
  get maxActive(): number {
    return this.config.auth.personalTokensMaxActive;
  }

  async listForUser(userId: string): Promise<PersonalToken[]> {
    const rows = await this.tokens.find({ where: { userId }, order: { createdAt: 'DESC' } });
    return rows.map(toPersonalToken);
  }

  /** One of the user's tokens that still works (not revoked); TOKEN_NOT_FOUND for anything else. */
  async getActive(id: string, ownerId: string): Promise<PersonalToken> {
    const entity = isUuid(id) ? await this.tokens.findOneBy({ id, userId: ownerId }) : null;
    if (!entity || entity.revokedAt) throw new PersonalTokenError('TOKEN_NOT_FOUND', `No personal access token with id "${id}"`, 'id');
    return toPersonalToken(entity);
  }

  /** Revokes a token; with `ownerId`, only a token of that user. Revoking twice is harmless. */
  async revoke(id: string, ownerId?: string): Promise<PersonalToken> {
    const entity = isUuid(id) ? await this.tokens.findOneBy(ownerId ? { id, userId: ownerId } : { id }) : null;
    if (!entity) throw new PersonalTokenError('TOKEN_NOT_FOUND', `No personal access token with id "${id}"`, 'id');
    if (!entity.revokedAt) {
      entity.revokedAt = this.clock.now();
      await this.tokens.update({ id }, { revokedAt: entity.revokedAt });
    }
    await this.verifier.forgetCredentials([id]);
    return toPersonalToken(entity);
  }

  async verify(token: string, tokenHash: string): Promise<Principal | null> {
    // Malformed or mistyped tokens (checksum) never reach the database.
    if (!isWellFormedSecret(token, SecretPrefix.personalAccessToken)) return null;
    const now = this.clock.now();
    const rows: CredentialRow[] = await this.dataSource.query(this.verifySql, [tokenHash, now]);
    const row = rows[0];
    if (!row) return null;
    const found = this.table.map(row);
    this.touch(found, now);
    return toPrincipal(row, { kind: 'personal_access_token', id: found.id, expiresAt: found.expiresAt });
  }

  /** Records use at most once per interval, so authentication is not a write on every request. */
  private touch(row: { id: string; lastUsedAt: Date | null }, now: Date): void {
    const interval = this.config.auth.personalTokenLastUsedIntervalMs;
    if (row.lastUsedAt && now.getTime() - new Date(row.lastUsedAt).getTime() < interval) return;
    const staleBefore = new Date(now.getTime() - interval);
    this.dataSource
      .query('UPDATE personal_access_tokens SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)', [
        row.id,
        now,
        staleBefore,
      ])
      .catch((err: unknown) => this.logger.warn(`Could not record token use: ${(err as Error).message}`));
  }
}

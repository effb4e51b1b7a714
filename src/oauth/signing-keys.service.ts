import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { DataSource, IsNull, MoreThan, Or, Repository } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { decryptWithSecret, encryptWithSecret } from '../config/key-encryption.js';
import { isDatabaseUnavailable } from '../database/database-unavailable.js';
import { SigningKeyEntity } from './signing-key.entity.js';

export interface PublicJwk {
  kty: string;
  n: string;
  e: string;
  kid: string;
  use: 'sig';
  alg: 'RS256';
}

interface ActiveKey {
  kid: string;
  privateKey: KeyObject;
  loadedAt: number;
}

// Other instances pick up a rotation within this time; both keys are in JWKS meanwhile.
const ACTIVE_KEY_REFRESH_MS = 60_000;
// A retired key stays published while tokens it signed may still be presented, plus clock skew.
const RETIRED_KEY_GRACE_MS = 5 * 60_000;
// Rotations queue on this advisory lock (any constant, the same on every instance and beside the
// migrations' 727_274_001), so two at once retire one key each instead of one failing on the index.
const ROTATION_LOCK_KEY = 727_274_002;

/** What thumbprint() gives: 43 base64url characters. */
const KID = /^[A-Za-z0-9_-]{43}$/;

/** RFC 7638 JWK thumbprint: a stable key id derived from the public key itself. */
function thumbprint(jwk: { e: string; n: string }): string {
  return createHash('sha256')
    .update(JSON.stringify({ e: jwk.e, kty: 'RSA', n: jwk.n }))
    .digest('base64url');
}

/**
 * RS256 keys for id_tokens: generated on first start, stored in the database with the private key
 * encrypted under SECRET_KEY, shared by every instance, rotatable with the old public key kept in JWKS
 * until the tokens it signed have expired.
 */
@Injectable()
export class SigningKeysService implements OnModuleInit {
  private readonly logger = new Logger(SigningKeysService.name);
  private active?: ActiveKey;
  private published?: { keys: PublicJwk[] };
  private retained?: { keys: PublicJwk[] };
  /** Public keys by kid, for verifying tokens this server signed; a kid's key never changes. */
  private readonly verificationKeys = new Map<string, KeyObject>();

  constructor(
    @InjectRepository(SigningKeyEntity) private readonly keys: Repository<SigningKeyEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.activeKey();
    await this.jwks();
  }

  /** The key that signs now: loaded from the database (refreshed every minute) or created. */
  async activeKey(): Promise<{ kid: string; privateKey: KeyObject }> {
    if (this.active && Date.now() - this.active.loadedAt < ACTIVE_KEY_REFRESH_MS) return this.active;
    let row = await this.keys.findOneBy({ retiredAt: IsNull() });
    if (!row) {
      await this.insertNewKey();
      row = await this.keys.findOneByOrFail({ retiredAt: IsNull() });
    }
    this.active = {
      kid: row.kid,
      privateKey: createPrivateKey(decryptWithSecret(this.secret(), row.privateKeyEncrypted)),
      loadedAt: Date.now(),
    };
    return this.active;
  }

  /**
   * Public keys of the active key and of retired keys whose tokens may still be valid. Read fresh, so a
   * rotation on any instance shows at once; while the database cannot be reached, the last set read is
   * published instead (public keys are no secret, and relying parties must keep verifying tokens).
   */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    const oldest = new Date(this.clock.now().getTime() - this.config.oauth.accessTokenTtlMs - RETIRED_KEY_GRACE_MS);
    this.published = await this.publicKeys(oldest, this.published);
    return this.published;
  }

  /**
   * Public keys of the active key and of keys retired less than `retainedMs` ago: for what is signed to be
   * checked long after (ticket codes, verified offline by door apps while their event is still to come).
   */
  async jwksRetainedFor(retainedMs: number): Promise<{ keys: PublicJwk[] }> {
    this.retained = await this.publicKeys(new Date(this.clock.now().getTime() - retainedMs), this.retained);
    return this.retained;
  }

  private async publicKeys(oldest: Date, published: { keys: PublicJwk[] } | undefined): Promise<{ keys: PublicJwk[] }> {
    let rows: SigningKeyEntity[];
    try {
      rows = await this.keys.find({ where: { retiredAt: Or(IsNull(), MoreThan(oldest)) }, order: { createdAt: 'DESC' } });
    } catch (err) {
      if (published && isDatabaseUnavailable(err)) return published;
      throw err;
    }
    return {
      keys: rows.map((row) => {
        const jwk = createPublicKey(row.publicKeyPem).export({ format: 'jwk' }) as { kty: string; n: string; e: string };
        return { kty: jwk.kty, n: jwk.n, e: jwk.e, kid: row.kid, use: 'sig', alg: 'RS256' };
      }),
    };
  }

  /**
   * The public key of one of this server's signing keys, retired ones included (an id_token_hint may be
   * long expired), or null for a kid this server never had.
   */
  async verificationKey(kid: string): Promise<KeyObject | null> {
    const known = this.verificationKeys.get(kid);
    if (known) return known;
    if (!KID.test(kid)) return null;
    const row = await this.keys.findOneBy({ kid });
    if (!row) return null;
    const key = createPublicKey(row.publicKeyPem);
    this.verificationKeys.set(kid, key);
    return key;
  }

  /** Retires the signing key and starts signing with a new one. */
  async rotate(): Promise<{ kid: string; retired: string | null }> {
    const retired = await this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1)', [ROTATION_LOCK_KEY]);
      const current = await manager.findOneBy(SigningKeyEntity, { retiredAt: IsNull() });
      if (current) await manager.update(SigningKeyEntity, { kid: current.kid }, { retiredAt: this.clock.now() });
      await manager.insert(SigningKeyEntity, this.newKeyRow());
      return current?.kid ?? null;
    });
    this.active = undefined;
    const { kid } = await this.activeKey();
    return { kid, retired };
  }

  private async insertNewKey(): Promise<void> {
    // Instances starting together race here; the partial unique index lets exactly one key win.
    await this.keys
      .createQueryBuilder()
      .insert()
      .values(this.newKeyRow())
      .orIgnore()
      .execute()
      .catch((err: unknown) => this.logger.warn(`Another instance created the signing key first: ${(err as Error).message}`));
  }

  private newKeyRow(): Partial<SigningKeyEntity> {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = publicKey.export({ format: 'jwk' }) as { n: string; e: string };
    return {
      kid: thumbprint(jwk),
      publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      privateKeyEncrypted: encryptWithSecret(this.secret(), privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
      createdAt: this.clock.now(),
      retiredAt: null,
    };
  }

  private secret(): string {
    if (!this.config.secretKey) throw new Error('SECRET_KEY is not resolved (call resolveSecretKey at start-up)');
    return this.config.secretKey;
  }
}

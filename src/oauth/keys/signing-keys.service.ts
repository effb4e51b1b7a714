import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { calculateJwkThumbprint } from 'jose';
import { createPrivateKey, createPublicKey, KeyObject } from 'node:crypto';
import { DataSource, In, IsNull, MoreThan, Or, Repository } from 'typeorm';
import { Clock } from '../../clock/clock.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { decryptWithSecret, encryptWithSecret } from '../../config/key-encryption.js';
import { EntityTable } from '../../database/entity-table.js';
import { isDatabaseUnavailable } from '../../errors/database-unavailable.js';
import {
  DEFAULT_SIGNING_ALG,
  generateSigningKeyPair,
  isSigningAlg,
  PublicJwk,
  publicJwkMembers,
  SIGNING_ALGS,
  SigningAlg,
} from './signing-algorithms.js';
import { SigningKeyEntity } from './signing-key.entity.js';

export type { PublicJwk } from './signing-algorithms.js';

interface ActiveKey {
  kid: string;
  alg: SigningAlg;
  privateKey: KeyObject;
  /** When it was read (the Clock's ms since the epoch). */
  loadedAt: number;
}

/** One key a rotation replaced: the new signing key of `alg`, and the one it retired (null if there was none). */
export interface RotatedKey {
  alg: SigningAlg;
  kid: string;
  retired: string | null;
}

/** A public key of ours with the algorithm it signs with (a kid's algorithm never changes). */
export interface VerificationKey {
  key: KeyObject;
  alg: SigningAlg;
}

// Other instances pick up a rotation within this time; both keys are in JWKS meanwhile.
const ACTIVE_KEY_REFRESH_MS = 60_000;
// A retired key stays published while tokens it signed may still be presented, plus clock skew.
const RETIRED_KEY_GRACE_MS = 5 * 60_000;
// Rotations queue on this advisory lock (any constant, the same on every instance and beside the
// migrations' 727_274_001), so two at once retire one key each instead of one failing on the index.
const ROTATION_LOCK_KEY = 727_274_002;

/** What an RFC 7638 thumbprint (SHA-256) is: 43 base64url characters. */
const KID = /^[A-Za-z0-9_-]{43}$/;

/**
 * Signing keys for id_tokens and JWT access tokens, one active key per algorithm (RS256, ES256, EdDSA):
 * generated on first start, stored in the database with the private key encrypted under SECRET_KEY,
 * shared by every instance, rotatable with the old public key kept in JWKS until the tokens it signed
 * have expired. A key's id is its RFC 7638 thumbprint.
 */
@Injectable()
export class SigningKeysService implements OnModuleInit {
  private readonly logger = new Logger(SigningKeysService.name);
  private readonly active = new Map<SigningAlg, ActiveKey>();
  private published?: { keys: PublicJwk[] };
  private readonly retained = new Map<SigningAlg, { keys: PublicJwk[] }>();
  /** Public keys by kid, for verifying tokens this server signed; a kid's key never changes. */
  private readonly verificationKeys = new Map<string, VerificationKey>();

  constructor(
    @InjectRepository(SigningKeyEntity) private readonly keys: Repository<SigningKeyEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    for (const alg of SIGNING_ALGS) await this.activeKey(alg);
    await this.jwks();
  }

  /** The key that signs with `alg` now: loaded from the database (refreshed every minute) or created. */
  async activeKey(alg: SigningAlg = DEFAULT_SIGNING_ALG): Promise<{ kid: string; alg: SigningAlg; privateKey: KeyObject }> {
    const known = this.active.get(alg);
    if (known && this.clock.now().getTime() - known.loadedAt < ACTIVE_KEY_REFRESH_MS) return known;
    let row = await this.keys.findOneBy({ alg, retiredAt: IsNull() });
    if (!row) {
      await this.insertNewKey(alg);
      row = await this.keys.findOneByOrFail({ alg, retiredAt: IsNull() });
    }
    const loaded: ActiveKey = {
      kid: row.kid,
      alg,
      privateKey: createPrivateKey(decryptWithSecret(this.secret(), row.privateKeyEncrypted)),
      loadedAt: this.clock.now().getTime(),
    };
    this.active.set(alg, loaded);
    return loaded;
  }

  /**
   * Public keys of the active keys and of retired keys whose tokens may still be valid, every algorithm.
   * Read fresh, so a rotation on any instance shows at once; while the database cannot be reached, the
   * last set read is published instead (public keys are no secret, and relying parties must keep
   * verifying tokens).
   */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    const oldest = new Date(this.clock.now().getTime() - this.config.oauth.accessTokenTtlMs - RETIRED_KEY_GRACE_MS);
    this.published = await this.publicKeys(oldest, [...SIGNING_ALGS], this.published);
    return this.published;
  }

  /**
   * Public keys of one algorithm's active key and of its keys retired less than `retainedMs` ago: for what
   * is signed to be checked long after (ticket codes, RS256, verified offline by door apps while their
   * event is still to come).
   */
  async jwksRetainedFor(retainedMs: number, alg: SigningAlg = DEFAULT_SIGNING_ALG): Promise<{ keys: PublicJwk[] }> {
    const keys = await this.publicKeys(new Date(this.clock.now().getTime() - retainedMs), [alg], this.retained.get(alg));
    this.retained.set(alg, keys);
    return keys;
  }

  private async publicKeys(oldest: Date, algs: SigningAlg[], published: { keys: PublicJwk[] } | undefined): Promise<{ keys: PublicJwk[] }> {
    let rows: SigningKeyEntity[];
    try {
      rows = await this.keys.find({
        where: { alg: In(algs), retiredAt: Or(IsNull(), MoreThan(oldest)) },
        order: { createdAt: 'DESC', kid: 'ASC' },
      });
    } catch (err) {
      if (published && isDatabaseUnavailable(err)) return published;
      throw err;
    }
    return {
      keys: rows.map((row) => ({ ...publicJwkMembers(createPublicKey(row.publicKeyPem)), kid: row.kid, use: 'sig', alg: row.alg })),
    };
  }

  /**
   * The public key of one of this server's signing keys, retired ones included (an id_token_hint may be
   * long expired), or null for a kid this server never had.
   */
  async verificationKey(kid: string): Promise<KeyObject | null> {
    return (await this.publicKey(kid))?.key ?? null;
  }

  /** The public key of a kid of ours with the algorithm it signs with, retired ones included; null for any other kid. */
  async publicKey(kid: string): Promise<VerificationKey | null> {
    const known = this.verificationKeys.get(kid);
    if (known) return known;
    if (!KID.test(kid)) return null;
    const row = await this.keys.findOneBy({ kid });
    if (!row || !isSigningAlg(row.alg)) return null;
    const found = { key: createPublicKey(row.publicKeyPem), alg: row.alg };
    this.verificationKeys.set(kid, found);
    return found;
  }

  /**
   * Retires the signing key of each algorithm in `algs` (all of them by default) and starts signing with a
   * new one, in one transaction.
   */
  async rotate(algs: readonly SigningAlg[] = SIGNING_ALGS): Promise<RotatedKey[]> {
    const rows = await Promise.all(algs.map((alg) => this.newKeyRow(alg)));
    const rotated = await this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1)', [ROTATION_LOCK_KEY]);
      const result: RotatedKey[] = [];
      for (const row of rows) {
        const current = await manager.findOneBy(SigningKeyEntity, { alg: row.alg, retiredAt: IsNull() });
        if (current) await manager.update(SigningKeyEntity, { kid: current.kid }, { retiredAt: this.clock.now() });
        await manager.insert(SigningKeyEntity, row);
        result.push({ alg: row.alg, kid: row.kid, retired: current?.kid ?? null });
      }
      return result;
    });
    for (const { alg } of rotated) this.active.delete(alg);
    for (const { alg } of rotated) await this.activeKey(alg);
    return rotated;
  }

  private async insertNewKey(alg: SigningAlg): Promise<void> {
    // Instances starting together race here; the partial unique index lets exactly one key per algorithm win.
    const row = await this.newKeyRow(alg);
    const properties = Object.keys(row) as (keyof SigningKeyEntity & string)[];
    const table = new EntityTable<SigningKeyEntity>(this.keys.metadata, 'k');
    await this.keys
      .query(
        `INSERT INTO ${table.name} (${table.list(...properties)}) VALUES (${properties.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT DO NOTHING`,
        properties.map((p) => row[p]),
      )
      .catch((err: unknown) => this.logger.warn(`Another instance created the ${alg} signing key first: ${(err as Error).message}`));
  }

  private async newKeyRow(alg: SigningAlg): Promise<SigningKeyEntity> {
    const { publicKey, privateKey } = generateSigningKeyPair(alg);
    return {
      kid: await calculateJwkThumbprint(publicJwkMembers(publicKey), 'sha256'),
      alg,
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

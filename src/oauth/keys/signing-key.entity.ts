import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import type { SigningAlg } from './signing-algorithms.js';

@Entity({ name: 'oauth_signing_keys' })
@Index('oauth_signing_keys_one_active_key', { synchronize: false })
@Check('oauth_signing_keys_alg_check', `alg IN ('RS256', 'ES256', 'EdDSA')`)
export class SigningKeyEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'oauth_signing_keys_pkey' })
  kid: string;

  /** The JWS algorithm the key signs with; one active key per algorithm. */
  @Column({ type: 'text', default: 'RS256' })
  alg: SigningAlg;

  @Column({ name: 'public_key_pem', type: 'text' })
  publicKeyPem: string;

  /** AES-256-GCM under a key derived from SECRET_KEY. */
  @Column({ name: 'private_key_encrypted', type: 'text' })
  privateKeyEncrypted: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** Set when a newer key took over signing; the public key stays in JWKS while its tokens live. */
  @Column({ name: 'retired_at', type: 'timestamptz', nullable: true })
  retiredAt: Date | null;
}

import { Inject, Injectable } from '@nestjs/common';
import { createHmac } from 'node:crypto';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { deriveKey } from '../../config/key-encryption.js';

/** What the subject of an application's tokens depends on. */
export interface SubjectClient {
  subjectType: 'public' | 'pairwise';
  redirectUris: readonly string[];
}

/**
 * The sector of a pairwise client (OpenID Connect Core §8.1): the host of its redirect URIs, which
 * registration requires to be one (no `sector_identifier_uri`). For a private-use scheme (a native app
 * has no host), the scheme.
 */
export function sectorOf(redirectUris: readonly string[]): string {
  const url = new URL(redirectUris[0]!);
  return url.host || url.protocol;
}

/** The sectors of these redirect URIs: a pairwise client must have exactly one. */
export function sectorsOf(redirectUris: readonly string[]): string[] {
  return [...new Set(redirectUris.map((uri) => sectorOf([uri])))];
}

/**
 * The `sub` an application sees for a user (OpenID Connect Core §8): the user's id for a public client;
 * for a pairwise client, an HMAC-SHA256 of its sector and the user's id under a key derived from
 * SECRET_KEY, so that applications of different sectors cannot tell they share a user, and one sector
 * always sees the same value.
 */
@Injectable()
export class Subjects {
  private readonly key: Buffer;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    if (!config.secretKey) throw new Error('SECRET_KEY is not resolved: pairwise subject identifiers need it');
    this.key = deriveKey(config.secretKey, 'oidc-pairwise-subjects');
  }

  of(client: SubjectClient, userId: string): string {
    if (client.subjectType !== 'pairwise') return userId;
    return createHmac('sha256', this.key)
      .update(`${sectorOf(client.redirectUris)}\u0000${userId}`)
      .digest('base64url');
  }
}

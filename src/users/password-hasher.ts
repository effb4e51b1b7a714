import { Inject, Injectable } from '@nestjs/common';
import argon2 from 'argon2';
import type { AppConfig } from '../config/config.schema.js';
import { APP_CONFIG } from '../config/config.module.js';

/**
 * argon2id's parameters for new hashes. `standard`: the library's defaults (m=64 MiB, t=3, p=4), which
 * follow RFC 9106's second recommendation. `test` (PASSWORD_HASH_COST=test, refused outside
 * NODE_ENV=test): the cheapest argon2id, as Rails and Django lower their hashers' cost in test suites.
 */
export const PASSWORD_HASH_PARAMETERS = {
  standard: { memoryCost: 65536, timeCost: 3, parallelism: 4 },
  test: { memoryCost: 1024, timeCost: 1, parallelism: 1 },
} as const satisfies Record<AppConfig['passwordHashCost'], { memoryCost: number; timeCost: number; parallelism: number }>;

@Injectable()
export class PasswordHasher {
  // Verified against when no user matches, so a sign-in for an unknown login costs the same time.
  private dummyHash?: Promise<string>;
  private readonly parameters: (typeof PASSWORD_HASH_PARAMETERS)[keyof typeof PASSWORD_HASH_PARAMETERS];

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'passwordHashCost'>) {
    this.parameters = PASSWORD_HASH_PARAMETERS[config.passwordHashCost];
  }

  hash(password: string): Promise<string> {
    return argon2.hash(password, { type: argon2.argon2id, ...this.parameters });
  }

  async verify(hash: string | undefined, password: string): Promise<boolean> {
    if (hash === undefined) {
      this.dummyHash ??= this.hash('agora-dummy-password');
      await argon2.verify(await this.dummyHash, password);
      return false;
    }
    return argon2.verify(hash, password);
  }
}

import { Injectable } from '@nestjs/common';
import argon2 from 'argon2';

/** argon2id with the library's defaults (m=64 MiB, t=3, p=4), which follow RFC 9106's second recommendation. */
@Injectable()
export class PasswordHasher {
  // Verified against when no user matches, so a sign-in for an unknown login costs the same time.
  private dummyHash?: Promise<string>;

  hash(password: string): Promise<string> {
    return argon2.hash(password, { type: argon2.argon2id });
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

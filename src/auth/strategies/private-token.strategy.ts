import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy as BaseStrategy } from 'passport-strategy';
import type { IncomingMessage } from 'node:http';
import { SecretPrefix } from '../secret-token.js';
import { CredentialVerifier } from '../credential-verifier.js';
import { Principal } from '../principal.js';

type Verify = (token: string, done: (err: unknown, principal?: Principal | null) => void) => void;

/** A passport strategy reading the `Private-Token` header (GitLab's name for it). */
class PrivateTokenHeaderStrategy extends BaseStrategy {
  name = 'private-token';

  constructor(private readonly verifyToken: Verify) {
    super();
  }

  override authenticate(req: IncomingMessage): void {
    const token = req.headers['private-token'];
    if (typeof token !== 'string' || token.length === 0) return this.fail(401);
    this.verifyToken(token, (err, principal) => {
      if (err) return this.error(err as Error);
      return principal ? this.success(principal) : this.fail(401);
    });
  }
}

/** `Private-Token: <token>`: personal access tokens only. */
@Injectable()
export class PrivateTokenStrategy extends PassportStrategy(PrivateTokenHeaderStrategy, 'private-token') {
  constructor(private readonly verifier: CredentialVerifier) {
    super();
  }

  validate(token: string): Promise<Principal | null> {
    return this.verifier.verifyKind(SecretPrefix.personalAccessToken, token);
  }
}

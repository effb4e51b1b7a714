import { Injectable } from '@nestjs/common';
import { Principal } from './principal.js';

/** Turns one kind of token, recognised by its prefix, into a Principal; null when not valid. */
export interface TokenVerifier {
  readonly prefix: string;
  verify(token: string): Promise<Principal | null>;
}

/**
 * Registry of token verifiers. Feature modules (personal tokens, OAuth) register theirs at start-up,
 * so the auth module depends on none of them.
 */
@Injectable()
export class CredentialVerifier {
  private readonly verifiers: TokenVerifier[] = [];

  register(verifier: TokenVerifier): void {
    this.verifiers.push(verifier);
  }

  /** Any registered token kind (what `Authorization: Bearer` accepts). */
  verifyAny(token: string): Promise<Principal | null> {
    const verifier = this.verifiers.find((v) => token.startsWith(v.prefix));
    return verifier ? verifier.verify(token) : Promise.resolve(null);
  }

  /** Only the kind with this prefix (what `Private-Token` accepts). */
  verifyKind(prefix: string, token: string): Promise<Principal | null> {
    const verifier = this.verifiers.find((v) => v.prefix === prefix);
    return verifier && token.startsWith(prefix) ? verifier.verify(token) : Promise.resolve(null);
  }
}

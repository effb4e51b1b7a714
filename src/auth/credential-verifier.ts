import { Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { CredentialCache } from './credential-cache.js';
import { Principal } from './principal.js';
import { hashSecret } from './secret-token.js';

/** Turns one kind of token, recognised by its prefix, into a Principal; null when not valid. */
export interface TokenVerifier {
  readonly prefix: string;
  /** `tokenHash` is hashSecret(token), computed once by the registry. */
  verify(token: string, tokenHash: string): Promise<Principal | null>;
}

/**
 * Registry of token verifiers, in front of the credential cache. Feature modules (personal tokens,
 * OAuth) register their verifier at start-up, so the auth module depends on none of them; when they
 * revoke a credential or block a user they tell the registry, which forgets it at once.
 */
@Injectable()
export class CredentialVerifier {
  private readonly verifiers: TokenVerifier[] = [];

  constructor(
    private readonly cache: CredentialCache,
    private readonly clock: Clock,
  ) {}

  register(verifier: TokenVerifier): void {
    this.verifiers.push(verifier);
  }

  /** Any registered token kind (what `Authorization: Bearer` accepts). */
  verifyAny(token: string): Promise<Principal | null> {
    return this.verifyWith(
      this.verifiers.find((v) => token.startsWith(v.prefix)),
      token,
    );
  }

  /** Only the kind with this prefix (what `Private-Token` accepts). */
  verifyKind(prefix: string, token: string): Promise<Principal | null> {
    return this.verifyWith(token.startsWith(prefix) ? this.verifiers.find((v) => v.prefix === prefix) : undefined, token);
  }

  forgetCredential(credentialId: string): void {
    this.cache.forgetCredential(credentialId);
  }

  forgetUser(userId: string): void {
    this.cache.forgetUser(userId);
  }

  private async verifyWith(verifier: TokenVerifier | undefined, token: string): Promise<Principal | null> {
    if (!verifier) return null;
    const tokenHash = hashSecret(token);
    const now = this.clock.now().getTime();
    const cached = this.cache.get(tokenHash, now);
    if (cached) return cached;
    const principal = await verifier.verify(token, tokenHash);
    if (principal) this.cache.set(tokenHash, principal, now, principal.credential.expiresAt);
    return principal;
  }
}

import { Principal } from './principal.js';

interface Entry {
  principal: Principal;
  expiresAt: number;
}

const MAX_ENTRIES = 10_000;

/**
 * Verified credentials kept in memory for a short time, keyed by the token's SHA-256, so a busy client
 * does not cost a database round trip per request. Entries are evicted on any change to the
 * credential or its user (see CredentialChangeListener), and never outlive the credential's own expiry.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry>();
  private suspended = false;

  constructor(private readonly ttlMs: number) {}

  get enabled(): boolean {
    return this.ttlMs > 0 && !this.suspended;
  }

  /** While change notifications cannot be received, nothing is cached (and nothing old is trusted). */
  suspend(): void {
    this.suspended = true;
    this.entries.clear();
  }

  resume(): void {
    this.suspended = false;
  }

  get(tokenHash: string, nowMs: number): Principal | undefined {
    if (!this.enabled) return undefined;
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.expiresAt <= nowMs) {
      this.entries.delete(tokenHash);
      return undefined;
    }
    return entry.principal;
  }

  set(tokenHash: string, principal: Principal, nowMs: number, credentialExpiresAt?: Date | null): void {
    if (!this.enabled) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    const expiresAt = Math.min(nowMs + this.ttlMs, credentialExpiresAt?.getTime() ?? Infinity);
    this.entries.set(tokenHash, { principal, expiresAt });
  }

  forgetCredential(credentialId: string): void {
    for (const [key, entry] of this.entries) if (entry.principal.credential.id === credentialId) this.entries.delete(key);
  }

  forgetUser(userId: string): void {
    for (const [key, entry] of this.entries) if (entry.principal.user.id === userId) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

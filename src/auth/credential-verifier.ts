import { Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { CachedClient, CredentialCache } from './credential-cache.js';
import { CredentialChangeListener } from './credential-change.listener.js';
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
 * revoke a credential or block a user they tell the registry, which forgets it here and returns once
 * no instance accepts it any more.
 */
@Injectable()
export class CredentialVerifier {
  private readonly verifiers: TokenVerifier[] = [];

  constructor(
    private readonly cache: CredentialCache,
    private readonly clock: Clock,
    private readonly changes: CredentialChangeListener,
  ) {}

  register(verifier: TokenVerifier): void {
    this.verifiers.push(verifier);
  }

  /**
   * The Principal of a token verified recently and not changed since, straight from the cache (no
   * promise, no strategy); undefined when it must be verified. `prefix` limits it to one kind, as
   * verifyKind does.
   */
  remembered(token: string, prefix?: string): Principal | undefined {
    if (!this.cache.enabled) return undefined;
    if (prefix !== undefined ? !token.startsWith(prefix) : !this.verifiers.some((v) => token.startsWith(v.prefix))) return undefined;
    return this.cache.get(hashSecret(token), this.clock.now().getTime());
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

  /**
   * An OAuth client by its client id, from the cache or from `load`. Client credentials share the cache
   * and its change notifications with tokens: a rotated secret or a deleted application is forgotten at
   * once here and, through the notification, on every other instance.
   */
  async client<C extends CachedClient>(clientId: string, load: () => Promise<C | null>): Promise<C | null> {
    const now = this.clock.now().getTime();
    const cached = this.cache.getClient<C>(clientId, now);
    if (cached) return cached;
    const generation = this.cache.generation;
    const client = await load();
    if (client) this.cache.setClient(clientId, client, now, generation);
    return client;
  }

  /**
   * A value computed from every OAuth client (the origins CORS allows), from the cache or from `load`;
   * forgotten whenever any client or token changes, here and, through the notification, on every
   * instance. A client added on another instance is seen here within the cache's TTL.
   */
  async derivedFromClients<V>(key: string, load: () => Promise<V>): Promise<V> {
    const now = this.clock.now().getTime();
    const cached = this.cache.getDerived<V>(key, now);
    if (cached !== undefined) return cached;
    const generation = this.cache.generation;
    const value = await load();
    this.cache.setDerived(key, value, now, generation);
    return value;
  }

  /**
   * Tokens or OAuth clients, by id, after their change has committed: forgotten here at once, and
   * resolved when no instance will accept them any more (see CredentialChangeListener.barrier).
   */
  async forgetCredentials(credentialIds: string[]): Promise<void> {
    for (const id of credentialIds) this.cache.forgetCredential(id);
    await this.changes.barrier();
  }

  /** Every credential of a user (blocked, renamed…), after the change has committed; see forgetCredentials. */
  async forgetUser(userId: string): Promise<void> {
    this.cache.forgetUser(userId);
    await this.changes.barrier();
  }

  private async verifyWith(verifier: TokenVerifier | undefined, token: string): Promise<Principal | null> {
    if (!verifier) return null;
    const tokenHash = hashSecret(token);
    const now = this.clock.now().getTime();
    const cached = this.cache.get(tokenHash, now);
    if (cached) return cached;
    const generation = this.cache.generation;
    const principal = await verifier.verify(token, tokenHash);
    if (principal) this.cache.set(tokenHash, principal, now, generation, principal.credential.expiresAt);
    return principal;
  }
}

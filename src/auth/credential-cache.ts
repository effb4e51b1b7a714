import { Principal } from './principal.js';

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/** The least a cached client credential (an OAuth application) carries: the id its changes are announced by. */
export interface CachedClient {
  id: string;
}

const MAX_ENTRIES = 10_000;

/**
 * Verified credentials kept in memory for a short time, so a busy client does not cost a database round
 * trip per request: API tokens keyed by their SHA-256, and OAuth clients (whose secret hash is compared on
 * every use) keyed by client id. Entries are evicted on any change to the credential or its user (see
 * CredentialChangeListener), and never outlive the credential's own expiry.
 *
 * A value read from the database before an eviction must not be stored after it: callers take
 * `generation` before reading and pass it to `set`, which drops the value if anything was evicted since.
 */
export class CredentialCache {
  private readonly principals = new Map<string, Entry<Principal>>();
  private readonly clients = new Map<string, Entry<CachedClient>>();
  /** Derived from every OAuth client (the browser origins allowed by CORS): dropped on any client change. */
  private readonly derived = new Map<string, Entry<unknown>>();
  private suspended = false;
  private evictions = 0;
  private trustedUntil = Infinity;

  constructor(private readonly ttlMs: number) {}

  /** Whether this instance caches at all (a TTL above zero, and a database whose changes it hears). */
  get configured(): boolean {
    return this.ttlMs > 0;
  }

  get enabled(): boolean {
    return this.ttlMs > 0 && !this.suspended;
  }

  /** Changes with every eviction; see the class comment. */
  get generation(): number {
    return this.evictions;
  }

  /** While change notifications cannot be received, nothing is cached (and nothing old is trusted). */
  suspend(): void {
    this.suspended = true;
    this.clear();
  }

  /** A read that began while suspended may have missed a notification: it must not be stored. */
  resume(): void {
    this.suspended = false;
    this.evictions++;
  }

  /**
   * Entries are served only until this moment (`performance.now()` time): the change listener moves it
   * forward each time it confirms that it has received every notification sent so far, so an instance
   * that stops hearing from the database stops trusting what it cached.
   */
  trustUntil(monotonicMs: number): void {
    this.trustedUntil = monotonicMs;
  }

  get(tokenHash: string, nowMs: number): Principal | undefined {
    return this.read(this.principals, tokenHash, nowMs);
  }

  set(tokenHash: string, principal: Principal, nowMs: number, generation: number, credentialExpiresAt?: Date | null): void {
    this.write(this.principals, tokenHash, principal, nowMs, generation, credentialExpiresAt?.getTime());
  }

  getClient<C extends CachedClient>(clientId: string, nowMs: number): C | undefined {
    return this.read(this.clients, clientId, nowMs) as C | undefined;
  }

  setClient(clientId: string, client: CachedClient, nowMs: number, generation: number): void {
    this.write(this.clients, clientId, client, nowMs, generation);
  }

  /** A value computed from all OAuth clients together, such as the origins CORS allows. */
  getDerived<V>(key: string, nowMs: number): V | undefined {
    return this.read(this.derived, key, nowMs) as V | undefined;
  }

  setDerived(key: string, value: unknown, nowMs: number, generation: number): void {
    this.write(this.derived, key, value, nowMs, generation);
  }

  /** A token, or an OAuth client, by its id. */
  forgetCredential(credentialId: string): void {
    this.evictions++;
    // Which credential a derived value depends on is not tracked: any change drops them all.
    this.derived.clear();
    for (const [key, entry] of this.principals) if (entry.value.credential.id === credentialId) this.principals.delete(key);
    for (const [key, entry] of this.clients) if (entry.value.id === credentialId) this.clients.delete(key);
  }

  forgetUser(userId: string): void {
    this.evictions++;
    for (const [key, entry] of this.principals) if (entry.value.user?.id === userId) this.principals.delete(key);
  }

  clear(): void {
    this.evictions++;
    this.principals.clear();
    this.clients.clear();
    this.derived.clear();
  }

  get size(): number {
    return this.principals.size + this.clients.size;
  }

  private read<V>(map: Map<string, Entry<V>>, key: string, nowMs: number): V | undefined {
    if (!this.enabled || performance.now() >= this.trustedUntil) return undefined;
    const entry = map.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= nowMs) {
      map.delete(key);
      return undefined;
    }
    return entry.value;
  }

  private write<V>(map: Map<string, Entry<V>>, key: string, value: V, nowMs: number, generation: number, until = Infinity): void {
    if (!this.enabled || generation !== this.evictions) return;
    if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value!);
    map.set(key, { value, expiresAt: Math.min(nowMs + this.ttlMs, until) });
  }
}

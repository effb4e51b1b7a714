import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { Metrics } from '../metrics/metrics.js';
import { RateLimitBudget, RateLimitError, RateLimitState, RateLimitSubject, retryAfterSeconds } from './rate-limit.js';
import { Charged, WindowCounters } from './window-counters.js';

/** How long a counter operation may wait for Redis before the process counts in memory instead. */
const REDIS_COMMAND_TIMEOUT_MS = 500;
/** After a Redis failure (an error, a timeout), how long the process counts in memory before trying Redis again. */
const REDIS_RETRY_AFTER_MS = 5000;
/** The most callers of one budget a process keeps in memory (about 100 bytes each). */
export const MAX_KEYS_IN_MEMORY = 100_000;

/**
 * The counting step, atomic in Redis: start the window if there is none, then add the points only if
 * they fit. Returns the total with this charge (over the limit: what it would have been, not stored)
 * and the window's milliseconds left, as rate-limiter-flexible reads its scripts' answers.
 * KEYS[1] the caller's key; ARGV: points, window seconds, limit.
 */
const CHARGE_IF_FITS = `redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX')
local used = tonumber(redis.call('get', KEYS[1]))
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  redis.call('expire', KEYS[1], ARGV[2])
  ttl = 1000 * ARGV[2]
end
local points = tonumber(ARGV[1])
if used + points <= tonumber(ARGV[3]) then
  used = redis.call('incrby', KEYS[1], points)
else
  used = used + points
end
return {used, ttl}`;

/**
 * The API's rate limits (docs/operations.md, "Rate limits"): a fixed window of RATE_LIMIT_WINDOW_SECONDS
 * per budget. Without REDIS_URL the counters live in this process (WindowCounters); with it, in Redis,
 * shared by every instance and counted by rate-limiter-flexible with one atomic script per request
 * (never a database write). While Redis fails or is slow, each process counts in memory, so the API
 * keeps answering with limits that are per instance until Redis answers again.
 *
 * Time is the injected Clock's: the windows in memory, every `X-RateLimit-Reset` and `Retry-After`, and
 * the back-off from Redis. A window kept in Redis is the one exception: it ends when its key expires,
 * by Redis's own clock (one clock for every instance; rate-limiter-flexible itself reads no time), and
 * its end is reported as the Clock's now plus the key's time to live.
 */
@Injectable()
export class RateLimits implements OnApplicationShutdown {
  private readonly logger = new Logger('RateLimits');
  private readonly limits?: Record<RateLimitBudget, number>;
  private readonly memory?: Record<RateLimitBudget, WindowCounters>;
  private readonly shared?: Record<RateLimitBudget, RateLimiterRedis>;
  private readonly redis?: Redis;
  /** Until when the process counts in memory because Redis failed (ms since the epoch). */
  private redisAvoidedUntil = 0;
  private redisReachable = true;
  private closing = false;
  private readonly keyPrefix: string;
  private readonly throttles = new Map<string, { memory: WindowCounters; shared?: RateLimiterRedis }>();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
  ) {
    this.keyPrefix = config.rateLimitKeyPrefix;
    const settings = config.rateLimits;
    if (!settings) return;
    this.limits = {
      user: settings.tokenPoints,
      address: settings.anonymousPoints,
      client: settings.oauthTokenRequests,
      registration: settings.oauthRegistrations,
    };
    const windowMs = settings.windowSeconds * 1000;
    const counters = () => new WindowCounters(windowMs, MAX_KEYS_IN_MEMORY);
    this.memory = { user: counters(), address: counters(), client: counters(), registration: counters() };
    if (!config.redisUrl) return;

    const redis = this.connect(config.redisUrl);
    this.redis = redis;
    const limiter = (budget: RateLimitBudget) =>
      new RateLimiterRedis({
        storeClient: redis,
        points: this.limits![budget],
        duration: settings.windowSeconds,
        keyPrefix: `${config.rateLimitKeyPrefix}rl:${budget}`,
        customIncrTtlLuaScript: CHARGE_IF_FITS,
        rejectIfRedisNotReady: true,
      });
    this.shared = {
      user: limiter('user'),
      address: limiter('address'),
      client: limiter('client'),
      registration: limiter('registration'),
    };
    metrics.rateLimitStore(() => redis.status === 'ready' && this.now() >= this.redisAvoidedUntil);
  }

  get enabled(): boolean {
    return this.limits !== undefined;
  }

  /**
   * Who pays for an API request: a person, not a credential (docs/operations.md, "Rate limits"), as
   * GitHub counts it. Every credential of a user spends the user's one budget: their personal access
   * tokens, their API explorer session, and the OAuth access tokens of every application they
   * consented to, so neither more tokens nor more applications buy more requests. A service account's
   * tokens (`client_credentials`) spend the service account's own budget. Anonymous: the
   * address, an IPv6 address by its /64.
   */
  subjectOf(request: FastifyRequest): RateLimitSubject {
    const principal = request.principal;
    if (!principal) return { budget: 'address', key: addressKey(request.ip) };
    // A service account is no person: it pays for itself, a budget the size of a person's.
    if (!principal.user) return { budget: 'user', key: `service-account:${principal.credential.clientId}` };
    return { budget: 'user', key: principal.user.id };
  }

  /** The request's budget, charged later by what the request turns out to cost. */
  budgetOf(request: FastifyRequest, reply: FastifyReply): RequestBudget {
    return new RequestBudget(this, reply, this.subjectOf(request));
  }

  /**
   * Spends `points` of the subject's budget and writes the `X-RateLimit-*` headers on the reply. A
   * charge that does not fit in what is left is not counted: it throws RateLimitError (after
   * `Retry-After` is written), and what is left stays for cheaper requests. Undefined when rate limits
   * are off.
   */
  charge(reply: FastifyReply, subject: RateLimitSubject, points: number): RateLimitState | undefined | Promise<RateLimitState | undefined> {
    if (!this.limits) return undefined;
    // Without Redis (or while it is avoided) the charge is synchronous: no promise on the request path.
    if (!this.shared || this.now() < this.redisAvoidedUntil) return this.settle(reply, subject, points, undefined);
    return this.chargeShared(subject, points).then((charged) => this.settle(reply, subject, points, charged));
  }

  /** The charge's answer: the headers, and the state, or RateLimitError when it did not fit. */
  private settle(reply: FastifyReply, subject: RateLimitSubject, points: number, shared: Charged | undefined): RateLimitState {
    const limit = this.limits![subject.budget];
    const now = this.now();
    const charged = shared ?? this.memory![subject.budget].charge(subject.key, points, limit, now);
    const state: RateLimitState = {
      limit,
      used: Math.min(charged.used, limit),
      remaining: Math.max(0, limit - charged.used),
      cost: points,
      resetAt: charged.resetAt,
    };
    writeRateLimitHeaders(reply, state);
    if (!charged.refused) return state;
    const retryAfter = retryAfterSeconds(state, now);
    void reply.header('retry-after', retryAfter);
    this.metrics.rateLimited(subject.budget);
    throw new RateLimitError(subject, state, retryAfter);
  }

  /**
   * A throttle of one action (sending a test webhook…), apart from the request budgets and on whether
   * or not those are: at most `limit` per `windowSeconds` for `key`, counted like them (in Redis when
   * there is one, shared by every instance; in this process otherwise, or while Redis fails). Returns
   * 0 when the action may go ahead (and counts it), else the whole seconds until it may.
   */
  async throttle(name: string, key: string, limit: number, windowSeconds: number): Promise<number> {
    const id = `${name}:${limit}:${windowSeconds}`;
    let throttle = this.throttles.get(id);
    if (!throttle) {
      throttle = {
        memory: new WindowCounters(windowSeconds * 1000, MAX_KEYS_IN_MEMORY),
        ...(this.redis && {
          shared: new RateLimiterRedis({
            storeClient: this.redis,
            points: limit,
            duration: windowSeconds,
            keyPrefix: `${this.keyPrefix}throttle:${name}`,
            customIncrTtlLuaScript: CHARGE_IF_FITS,
            rejectIfRedisNotReady: true,
          }),
        }),
      };
      this.throttles.set(id, throttle);
    }
    if (throttle.shared && this.now() >= this.redisAvoidedUntil) {
      try {
        await throttle.shared.consume(key, 1);
        this.redisAnswered();
        return 0;
      } catch (err) {
        if (err instanceof RateLimiterRes) return Math.max(1, Math.ceil(err.msBeforeNext / 1000));
        this.redisFailed((err as Error).message);
      }
    }
    const now = this.now();
    const charged = throttle.memory.charge(key, 1, limit, now);
    return charged.refused ? Math.max(1, Math.ceil((charged.resetAt - now) / 1000)) : 0;
  }

  /** The charge in Redis; undefined (count in memory) without Redis, or while it fails. */
  private async chargeShared(subject: RateLimitSubject, points: number): Promise<Charged | undefined> {
    let result: RateLimiterRes;
    let refused = false;
    try {
      result = await this.shared![subject.budget].consume(subject.key, points);
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        result = err;
        refused = true;
      } else {
        this.redisFailed((err as Error).message);
        return undefined;
      }
    }
    this.redisAnswered();
    const now = this.now();
    // Refused, the script did not store the charge: the window holds what it held before.
    return { used: refused ? result.consumedPoints - points : result.consumedPoints, resetAt: now + result.msBeforeNext, refused };
  }

  /** The Clock's time, in ms since the epoch: every window, reset header and Redis back-off reads it. */
  private now(): number {
    return this.clock.now().getTime();
  }

  /** Counts in memory for a while, and says so once. */
  private redisFailed(reason: string): void {
    this.redisAvoidedUntil = this.now() + REDIS_RETRY_AFTER_MS;
    if (!this.redisReachable || this.closing) return;
    this.redisReachable = false;
    this.logger.warn(`Redis (REDIS_URL) cannot be reached: ${reason}. Rate-limit counters are kept per process until it answers again.`);
  }

  private redisAnswered(): void {
    if (this.redisReachable) return;
    this.redisReachable = true;
    this.logger.log('Redis answers again: rate-limit counters are shared by every instance');
  }

  /** Counters need no goodbye: the connection is closed at once, and stops reconnecting. */
  onApplicationShutdown(): void {
    this.closing = true;
    this.redis?.disconnect();
  }

  private connect(url: string): Redis {
    const redis = new Redis(url, {
      // While disconnected a command fails at once (and the process counts in memory) instead of queueing.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: 5000,
      // Reconnects for ever, at most 2 s apart.
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    redis.on('error', (err: Error) => this.redisFailed(err.message));
    // A server that goes away closes the connection; the reconnection attempts then fail with errors.
    redis.on('close', () => this.redisFailed('the connection closed'));
    return redis;
  }
}

/** The `X-RateLimit-*` headers GitHub and GitLab send (`-Reset` in Unix seconds). */
export function writeRateLimitHeaders(reply: FastifyReply, state: RateLimitState): void {
  void reply
    .header('x-ratelimit-limit', state.limit)
    .header('x-ratelimit-remaining', state.remaining)
    .header('x-ratelimit-used', state.used)
    .header('x-ratelimit-reset', Math.ceil(state.resetAt / 1000));
}

/**
 * An anonymous caller's key: its IPv4 address, or the /64 network of an IPv6 address (one host is
 * usually given a whole /64, so counting single IPv6 addresses would let it multiply its budget).
 */
export function addressKey(ip: string): string {
  // Not an address (a proxy header that is not one): all such callers share one budget.
  if (!ipaddr.isValid(ip)) return 'invalid';
  const address = ipaddr.process(ip); // an IPv4-mapped IPv6 address becomes the IPv4 address
  if (address.kind() === 'ipv4') return address.toString();
  return `${(address as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`;
}

/**
 * The network an address belongs to, for what one actor must not multiply by using many addresses
 * (dynamic client registration): an IPv4 address by its /24, an IPv6 address by its /48, the block a
 * site is usually given (a /56 would let the holder of one /48 count as 256 actors).
 */
export function networkKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return 'invalid';
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return `${(address as ipaddr.IPv4).octets.slice(0, 3).join('.')}.0/24`;
  return `${(address as ipaddr.IPv6).parts
    .slice(0, 3)
    .map((part) => part.toString(16))
    .join(':')}::/48`;
}

/**
 * One request's charge to its budget, made once: GraphQL charges an operation by its cost when it has
 * been analysed, and 1 point when the request ended before that (a document that does not parse).
 */
export class RequestBudget {
  /** The budget after the charge; undefined before it, or when rate limits are off. */
  state?: RateLimitState;
  /** Set when the charge was refused: the request is answered 429. */
  refusal?: RateLimitError;
  private charged = false;

  constructor(
    private readonly limits: RateLimits,
    private readonly reply: FastifyReply,
    readonly subject: RateLimitSubject,
  ) {}

  /** Synchronous without Redis; a promise otherwise. A refusal is kept in `refusal`, not thrown. */
  charge(points: number): void | Promise<void> {
    if (this.charged) return;
    this.charged = true;
    try {
      const state = this.limits.charge(this.reply, this.subject, points);
      if (!(state instanceof Promise)) {
        this.state = state;
        return;
      }
      return state.then(
        (settled) => {
          this.state = settled;
        },
        (err: unknown) => this.refused(err),
      );
    } catch (err) {
      this.refused(err);
    }
  }

  private refused(err: unknown): void {
    if (!(err instanceof RateLimitError)) throw err;
    this.refusal = err;
  }
}

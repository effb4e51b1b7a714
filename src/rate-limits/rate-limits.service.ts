import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { Redis } from 'ioredis';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { Metrics } from '../metrics/metrics.js';
import { RateLimitBudget, RateLimitError, RateLimitState, RateLimitSubject, retryAfterSeconds } from './rate-limit.js';

/** How long a counter operation may wait for Redis before the process counts in memory instead. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

/**
 * The API's rate limits (docs/operations.md, "Rate limits"): a fixed window of RATE_LIMIT_WINDOW_SECONDS
 * per budget, counted by `rate-limiter-flexible`. Without REDIS_URL the counters live in this process;
 * with it, in Redis, shared by every instance: one atomic script (INCRBY with its expiry) per request,
 * never a database write. While Redis cannot be reached each process counts in memory, so the API keeps
 * answering with limits that are per instance until Redis is back.
 */
@Injectable()
export class RateLimits implements OnApplicationShutdown {
  private readonly logger = new Logger('RateLimits');
  private readonly limiters?: Record<RateLimitBudget, RateLimiterAbstract>;
  private readonly redis?: Redis;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    const limits = config.rateLimits;
    if (!limits) return;
    const points: Record<RateLimitBudget, number> = {
      token: limits.tokenPoints,
      address: limits.anonymousPoints,
      client: limits.oauthTokenRequests,
    };
    const redis = config.redisUrl ? this.connect(config.redisUrl) : undefined;
    this.redis = redis;
    const limiter = (budget: RateLimitBudget): RateLimiterAbstract => {
      const options = { points: points[budget], duration: limits.windowSeconds, keyPrefix: `agora:rl:${budget}` };
      const memory = new RateLimiterMemory(options);
      return redis
        ? new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: memory })
        : memory;
    };
    this.limiters = { token: limiter('token'), address: limiter('address'), client: limiter('client') };
    if (redis) metrics.rateLimitStore(() => redis.status === 'ready');
  }

  get enabled(): boolean {
    return this.limiters !== undefined;
  }

  /** Who pays for an API request: its credential, or (anonymous) its address, an IPv6 address by its /64. */
  subjectOf(request: FastifyRequest): RateLimitSubject {
    const credential = request.principal?.credential;
    return credential
      ? { budget: 'token', key: `${credential.kind}:${credential.id}` }
      : { budget: 'address', key: addressKey(request.ip) };
  }

  /**
   * Spends `points` of the subject's budget and writes the `X-RateLimit-*` headers on the reply. Over
   * the limit, throws RateLimitError (after `Retry-After` is written) and gives back the points of the
   * refused request, so that a costly request refused does not also spend what a cheaper one could use.
   * Undefined when rate limits are off.
   */
  async charge(reply: FastifyReply, subject: RateLimitSubject, points: number): Promise<RateLimitState | undefined> {
    const limiter = this.limiters?.[subject.budget];
    if (!limiter) return undefined;
    let result: RateLimiterRes;
    let refused = false;
    try {
      result = await limiter.consume(subject.key, points);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      result = err;
      refused = true;
    }
    const limit = limiter.points;
    // Refused: what was spent before this request, which stays spent.
    const before = result.consumedPoints - points;
    const state: RateLimitState = {
      limit,
      used: refused ? Math.min(before, limit) : result.consumedPoints,
      remaining: refused ? Math.max(0, limit - before) : result.remainingPoints,
      cost: points,
      resetAt: new Date(Date.now() + result.msBeforeNext),
    };
    writeRateLimitHeaders(reply, state);
    if (!refused) return state;

    // The budget had points left, only fewer than this request costs: they stay spendable.
    if (before < limit) await limiter.reward(subject.key, points).catch(() => undefined);
    void reply.header('retry-after', retryAfterSeconds(state));
    this.metrics.rateLimited(subject.budget);
    throw new RateLimitError(subject, state);
  }

  /** The request's budget, charged later by what the request turns out to cost. */
  budgetOf(request: FastifyRequest, reply: FastifyReply): RequestBudget {
    return new RequestBudget(this, reply, this.subjectOf(request));
  }

  /** Counters need no goodbye: the connection is closed at once, and stops reconnecting. */
  onApplicationShutdown(): void {
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
    let reachable: boolean | undefined;
    redis.on('ready', () => {
      if (reachable === false) this.logger.log('Redis is reachable again: rate-limit counters are shared by every instance');
      reachable = true;
    });
    const lost = (reason: string) => {
      if (reachable === false) return;
      reachable = false;
      this.logger.warn(`Redis (REDIS_URL) cannot be reached: ${reason}. Rate-limit counters are kept per process until it is back.`);
    };
    redis.on('error', (err: Error) => lost(err.message));
    // A server that goes away closes the connection; the reconnection attempts then fail with errors.
    redis.on('close', () => lost('the connection closed'));
    return redis;
  }
}

/** The `X-RateLimit-*` headers GitHub and GitLab send (`-Reset` in Unix seconds). */
export function writeRateLimitHeaders(reply: FastifyReply, state: RateLimitState): void {
  void reply
    .header('x-ratelimit-limit', state.limit)
    .header('x-ratelimit-remaining', state.remaining)
    .header('x-ratelimit-used', state.used)
    .header('x-ratelimit-reset', Math.ceil(state.resetAt.getTime() / 1000));
}

/**
 * An anonymous caller's key: its IPv4 address, or the /64 network of an IPv6 address (one host is
 * usually given a whole /64, so counting single IPv6 addresses would let it multiply its budget).
 */
export function addressKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip); // an IPv4-mapped IPv6 address becomes the IPv4 address
  if (address.kind() === 'ipv4') return address.toString();
  return `${(address as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`;
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

  async charge(points: number): Promise<void> {
    if (this.charged) return;
    this.charged = true;
    try {
      this.state = await this.limits.charge(this.reply, this.subject, points);
    } catch (err) {
      if (!(err instanceof RateLimitError)) throw err;
      this.refusal = err;
    }
  }
}

import { availableParallelism } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const boolean = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const port = z.coerce
  .number({ error: 'must be a number' })
  .int('must be a whole number')
  .min(0, 'must be between 0 and 65535')
  .max(65535, 'must be between 0 and 65535');

const positiveInt = (max: number) =>
  z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(max, `must be at most ${max}`);

const wholeNumberBetween = (min: number, max: number) =>
  z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be between ${min} and ${max}`)
    .max(max, `must be between ${min} and ${max}`);

/** The most server processes WORKERS may ask for (the first 256 cores of a machine is plenty for one primary). */
export const MAX_WORKERS = 256;

const WORKERS_PROBLEM = `must be a whole number from 1 to ${MAX_WORKERS}, or auto (one per core)`;

/** `auto`, or a whole number of processes; `auto` is resolved by loadConfig. */
const workers = z
  .string()
  .trim()
  .refine((v) => v === 'auto' || (/^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= MAX_WORKERS), WORKERS_PROBLEM)
  .transform((v): number | 'auto' => (v === 'auto' ? 'auto' : Number(v)));

/**
 * Every setting the service reads, with its default. docs/configuration.md and .env.example
 * describe the same list; keep the three in step.
 */
export const environmentSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** `test` only with NODE_ENV=test: cheap password hashes for test suites (checked in loadConfig). */
  PASSWORD_HASH_COST: z.enum(['standard', 'test']).default('standard'),
  HOST: z.string().min(1).default('localhost'),
  PORT: port.default(3000),
  BASE_URL: z
    .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL such as https://agora.example.com' })
    .optional()
    .refine((v) => v === undefined || !/[?#]/.test(v), 'must not contain a query or fragment')
    .transform((v) => v?.replace(/\/+$/, '')),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/.+/, 'must be a postgres:// or postgresql:// URL (unset it to use the embedded database)')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /**
   * How DATABASE_URL hands out server sessions: `session` (the server itself, or a pooler in session mode:
   * each connection its own session) or `transaction` (a pooler in transaction mode: statements run
   * unnamed, no per-connection SET, and DATABASE_DIRECT_URL carries what needs a session).
   */
  DATABASE_POOLING: z.enum(['session', 'transaction']).default('session'),
  /** A connection with a session of its own to the same database, for LISTEN and the migration lock. */
  DATABASE_DIRECT_URL: z
    .string()
    .regex(
      /^postgres(ql)?:\/\/.+/,
      'must be a postgres:// or postgresql:// URL to the same database as DATABASE_URL, without a pooler in transaction mode',
    )
    .optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_POOL_SIZE: positiveInt(200).default(10),
  DATABASE_CONNECT_TIMEOUT_SECONDS: positiveInt(600).default(10),
  DATABASE_STATEMENT_TIMEOUT_SECONDS: wholeNumberBetween(0, 3600).default(10),
  DATABASE_POOL_WAIT_TIMEOUT_MS: wholeNumberBetween(50, 600_000).default(2000),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS: wholeNumberBetween(0, 86400).default(60),
  DATABASE_KEEPALIVE_SECONDS: positiveInt(7200).default(30),
  DATABASE_STALL_SECONDS: positiveInt(3600).default(60),
  MIGRATIONS_RUN: boolean.default(true),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRUST_PROXY: z
    .string()
    .transform((value, ctx): false | number | string[] => {
      const v = value.trim().toLowerCase();
      if (['false', '0', 'no'].includes(v)) return false;
      // One proxy in front: its X-Forwarded-For entry is the client. Trusting every hop would let a client
      // choose its own address by sending the header itself.
      if (['true', 'yes'].includes(v)) return 1;
      if (/^\d+$/.test(v) && Number(v) <= 10) return Number(v);
      const entries = value.split(',').map((entry) => entry.trim());
      const bad = entries.find((entry) => !(ipaddr.IPv4.isValidFourPartDecimal(entry) || ipaddr.IPv6.isValid(entry) || isCidr(entry)));
      if (bad === undefined) return entries;
      ctx.addIssue({
        code: 'custom',
        message: `must be false, true (one proxy), the number of proxies in front (1 to 10), or their addresses and CIDR ranges separated by commas ("${bad}" is none of these)`,
      });
      return z.NEVER;
    })
    .default(false),
  SHUTDOWN_TIMEOUT_SECONDS: positiveInt(600).default(10),
  WORKERS: workers.default(1),
  PERSONAL_TOKEN_LAST_USED_INTERVAL_SECONDS: positiveInt(86400).default(60),
  PERSONAL_TOKENS_MAX_ACTIVE: positiveInt(10_000).default(100),
  AUTH_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  HOUSEKEEPING_INTERVAL_SECONDS: positiveInt(7 * 86400).default(3600),
  EVENTS_WEB_URL: z
    .string()
    .regex(/^https?:\/\/[^\s]+$/, 'must be an http:// or https:// address')
    .refine((v) => v.includes('{id}') || v.includes('{slug}'), 'must contain {id} or {slug}, e.g. https://events.example.com/e/{slug}')
    .optional(),
  ATTENDEE_MAIL: boolean.default(true),
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: boolean.default(false),
  WEBHOOKS_ALLOW_HTTP: boolean.default(false),
  WEBHOOKS_CONCURRENCY: positiveInt(500).default(25),
  JOBS_CONCURRENCY: positiveInt(100).default(5),
  JOBS_RETRY_DELAY_SECONDS: positiveInt(3600).default(10),
  JOBS_RETRY_LIMIT: wholeNumberBetween(0, 30).default(10),
  SECRET_KEY: z.string().optional(),
  SESSION_TTL_HOURS: positiveInt(24 * 365).default(336),
  OAUTH_CODE_TTL_SECONDS: positiveInt(600).default(60),
  OAUTH_REFRESH_TOKEN_IDLE_SECONDS: positiveInt(10 * 365 * 86400).default(14 * 86400),
  OAUTH_REFRESH_TOKEN_ABSOLUTE_SECONDS: positiveInt(10 * 365 * 86400).default(90 * 86400),
  OAUTH_DEVICE_CODE_TTL_SECONDS: positiveInt(3600).default(600),
  // The bound on how long a revoked JWT access token may still be accepted by a resource server that does not introspect.
  OAUTH_JWT_ACCESS_TOKEN_TTL_SECONDS: wholeNumberBetween(60, 900).default(300),
  OAUTH_DYNAMIC_REGISTRATION: boolean.default(false),
  // At least an hour: a client registers, then a person signs in and consents before its first code exists.
  OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS: wholeNumberBetween(3600, 365 * 86400).default(86400),
  OAUTH_UNCLAIMED_APPLICATIONS_MAX: positiveInt(1_000_000).default(100_000),
  OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK: positiveInt(1_000_000).default(20),
  OAUTH_JWKS_URI_ALLOW_PRIVATE_TARGETS: boolean.default(false),
  OAUTH_JWKS_URI_ALLOW_HTTP: boolean.default(false),
  OAUTH_JWKS_URI_CACHE_SECONDS: positiveInt(86400).default(300),
  OAUTH_JWKS_URI_REFETCH_SECONDS: positiveInt(3600).default(60),
  GRAPHQL_MAX_DEPTH: positiveInt(100).default(12),
  GRAPHQL_MAX_COST: positiveInt(1_000_000).default(20000),
  GRAPHQL_ANONYMOUS_MAX_DEPTH: positiveInt(100).default(8),
  GRAPHQL_ANONYMOUS_MAX_COST: positiveInt(1_000_000).default(5000),
  LEGACY_API_SUNSET: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date such as 2027-12-31')
    .refine((v) => !Number.isNaN(Date.parse(`${v}T00:00:00Z`)), 'must be a real date such as 2027-12-31')
    .default('2027-12-31'),
  LEGACY_API_MIGRATION_GUIDE_URL: z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }).optional(),
  METRICS_TOKEN: z.string().optional(),
  METRICS_PORT: port.optional(),
  METRICS_HOST: z.string().min(1).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL such as http://otel-collector:4318' })
    .optional()
    .transform((v) => v?.replace(/\/+$/, '')),
  OTEL_SERVICE_NAME: z.string().min(1).default('agora'),
  RATE_LIMIT_ENABLED: boolean.default(true),
  RATE_LIMIT_WINDOW_SECONDS: positiveInt(86400).default(3600),
  RATE_LIMIT_POINTS: positiveInt(1_000_000_000).default(5000),
  RATE_LIMIT_ANONYMOUS_POINTS: positiveInt(1_000_000_000).default(1000),
  RATE_LIMIT_OAUTH_TOKEN_REQUESTS: positiveInt(1_000_000_000).default(10000),
  RATE_LIMIT_OAUTH_REGISTRATIONS: positiveInt(1_000_000_000).default(20),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL such as redis://redis:6379/0' }).optional(),
  RATE_LIMIT_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be 1 to 64 letters, digits, "_", ".", ":" or "-", such as agora-staging:')
    .default('agora:'),
  SMTP_URL: z
    .string()
    .refine(
      isSmtpUrl,
      'must be an smtp:// or smtps:// URL such as smtps://user:password@smtp.example.com:465 (unset it to write mail to files)',
    )
    .optional(),
  MAIL_FROM: z
    .string()
    .transform((value, ctx) => {
      const from = parseMailbox(value);
      if (from) return from;
      ctx.addIssue({
        code: 'custom',
        message: 'must be an e-mail address, optionally with a display name, such as Agora <agora@example.com>',
      });
      return z.NEVER;
    })
    .optional(),
});

/** Settings whose value may hold a password: a problem with one names the setting, never the value. */
const SECRET_VALUES = new Set(['SMTP_URL']);

export type Environment = z.input<typeof environmentSchema>;

export interface AppConfig {
  env: 'development' | 'production' | 'test';
  /**
   * argon2id's cost for new password hashes: `standard` is RFC 9106's second recommendation (m=64 MiB,
   * t=3, p=4); `test` (m=1 MiB, t=1, p=1; NODE_ENV=test only) keeps test suites that sign in thousands
   * of times fast. A hash records its own parameters, so verifying works whatever the setting.
   */
  passwordHashCost: 'standard' | 'test';
  host: string;
  port: number;
  baseUrl: string;
  /**
   * Which `X-Forwarded-*` to believe (Fastify's `trustProxy`): false, the number of proxies in front
   * (TRUST_PROXY=true is 1), or the proxies' addresses and CIDR ranges.
   */
  trustProxy: false | number | string[];
  shutdownTimeoutMs: number;
  /**
   * Server processes: 1 is one process, as `npm start` has always run; more makes `main.ts` a
   * node:cluster primary that forks this many workers sharing the port (src/cluster/). Needs DATABASE_URL.
   */
  workers: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  database: {
    /** A PostgreSQL server, or undefined for the embedded database under `dataDir`. */
    url?: string;
    /** DATABASE_DIRECT_URL: what needs a session of its own (LISTEN, the migration lock); DATABASE_URL when unset. */
    directUrl?: string;
    /** DATABASE_POOLING: whether DATABASE_URL gives each connection its own session (`session`) or shares sessions per transaction. */
    pooling: 'session' | 'transaction';
    dataDir: string;
    poolSize: number;
    connectTimeoutMs: number;
    /** Server-side `statement_timeout` of the serving pool; 0 is off. */
    statementTimeoutMs: number;
    /**
     * How long the client waits for the answer to one statement before it gives up and discards the
     * connection (pg's `query_timeout`): the statement timeout plus QUERY_TIMEOUT_GRACE_MS, for the
     * server's own cancellation to arrive first; 0 (off) with the statement timeout.
     */
    queryTimeoutMs: number;
    /** The longest a statement of the serving pool on a PostgreSQL server waits for a connection before it is refused (503, `Retry-After`). */
    poolWaitTimeoutMs: number;
    /** Server-side `idle_in_transaction_session_timeout` of the serving pool; 0 is off. */
    idleInTransactionTimeoutMs: number;
    /** TCP keep-alive on database connections: idle time before the first probe. */
    keepAliveMs: number;
    /**
     * Liveness fails (/healthz 503) when no statement through the pool has had any answer from the
     * database for this long while a new connection to it answers: the process cannot recover by itself.
     */
    stallMs: number;
    migrationsRun: boolean;
  };
  auth: {
    personalTokenLastUsedIntervalMs: number;
    /** The most personal access tokens one user may hold at once, not revoked and not expired. */
    personalTokensMaxActive: number;
    cacheTtlMs: number;
  };
  /**
   * Key material for encrypting signing keys at rest. Undefined until resolveSecretKey() fills it in
   * (from SECRET_KEY, or a generated file in DATA_DIR outside production).
   */
  secretKey?: string;
  /** Cookies get the Secure flag when BASE_URL is https. */
  secureCookies: boolean;
  /**
   * Passkeys (WebAuthn), derived from BASE_URL: the relying party is its host name, and browsers'
   * responses are accepted from its origin only (docs/account-security.md, "Passkeys").
   */
  webAuthn: WebAuthnRelyingParty;
  sessionTtlMs: number;
  /** How often the fleet, all instances together, deletes expired rows. */
  housekeepingIntervalMs: number;
  /**
   * The address of an event's page on the platform's own site, `{id}` and `{slug}` filled in (mails link
   * to it); undefined when Agora serves only the API, and mails then carry no link to the event.
   */
  eventsWebUrl?: string;
  /**
   * Whether Agora tells attendees by e-mail (docs/mail.md). False where the platform's own front end
   * sends these messages: registrations then write no mail jobs at all.
   */
  attendeeMail: boolean;
  /** Webhooks (src/webhooks/, docs/webhooks.md). */
  webhooks: {
    /**
     * Whether endpoints may be loopback, private, link-local or otherwise non-public addresses (an
     * on-premise receiver; tests). Off by default: such targets are refused at registration and delivery.
     */
    allowPrivateTargets: boolean;
    /** Whether endpoints may be plain http:// (besides https://). */
    allowHttp: boolean;
    /** Delivery attempts one process makes at once (each waits up to 10 s on its receiver). */
    concurrency: number;
  };
  /** The job queue (src/jobs/, docs/operations.md "Jobs"). */
  jobs: {
    /** Jobs one process runs at once (each instance and each of its WORKERS). */
    concurrency: number;
    /** The first retry waits this long to twice as long (10 to 20 s by default); each further one twice as long. */
    retryDelaySeconds: number;
    /** Retries after the first attempt; a job that fails them all is kept as failed (the dead letters). */
    retryLimit: number;
  };
  oauth: {
    codeTtlMs: number;
    /** Lifetime of a device authorization (RFC 8628): the device code and the user code. */
    deviceCodeTtlMs: number;
    /** Fixed by the specification. */
    accessTokenTtlMs: number;
    /**
     * Lifetime of a JWT access token (RFC 9068): short, as it bounds how long a revoked one is still
     * accepted by a resource server that verifies it offline without introspecting.
     */
    jwtAccessTokenTtlMs: number;
    /** A refresh token not used within this long expires. */
    refreshTokenIdleMs: number;
    /** No refresh token of a family outlives this, counted from the family's first token. */
    refreshTokenAbsoluteMs: number;
    /** Dynamic client registration (RFC 7591) at POST /oauth/register; off unless OAUTH_DYNAMIC_REGISTRATION=true. */
    dynamicRegistration: boolean;
    /**
     * A dynamically registered application still unclaimed and never used (no grant, code, token or
     * device authorization names it) this long after registering is deleted by housekeeping.
     */
    unclaimedApplicationTtlMs: number;
    /** The most dynamically registered applications waiting to be claimed, all networks together. */
    unclaimedApplicationsMax: number;
    /** The most of them registered from one network (IPv4 /24, IPv6 /48): a small share of the total. */
    unclaimedApplicationsPerNetwork: number;
    /** The public keys of `private_key_jwt` clients given by `jwks_uri` (src/oauth/clients/client-keys.ts). */
    clientJwks: {
      /** Which `jwks_uri` targets are allowed, as for webhooks: public https addresses unless these say otherwise. */
      policy: { allowPrivateTargets: boolean; allowHttp: boolean };
      /** How long a fetched key set is used before it is fetched again. */
      cacheMs: number;
      /** An assertion signed by a key the cached set lacks refetches it, at most this often per client. */
      refetchIntervalMs: number;
    };
  };
  graphql: {
    limits: {
      authenticated: { maxDepth: number; maxCost: number };
      anonymous: { maxDepth: number; maxCost: number };
    };
  };
  legacyApi: {
    /** When the legacy REST API stops answering (the `Sunset` header). */
    sunset: Date;
    /** Where its callers learn to move to GraphQL (the `Link` header). */
    migrationGuideUrl: string;
  };
  /**
   * `/metrics` (Prometheus). Off unless `token` or `port` is set: with `port`, a second listener on
   * `host` serves only /metrics and the main listener has no such route; with `token`, a scrape must
   * send `Authorization: Bearer <token>`, on whichever listener serves it.
   */
  metrics: {
    token?: string;
    port?: number;
    host: string;
  };
  /**
   * API rate limits (docs/operations.md, "Rate limits"): points per window for each user, each anonymous
   * address and each OAuth client at the token endpoint (and the endpoints that share its budget);
   * undefined when RATE_LIMIT_ENABLED=false.
   */
  rateLimits?: {
    windowSeconds: number;
    /**
     * Per user (every credential: personal tokens, the explorer session, every OAuth application's access
     * tokens), on /graphql, /api/ and /oauth/userinfo.
     */
    tokenPoints: number;
    /** Per address (an IPv6 address by its /64) for anonymous callers of /graphql, /api/ and /oauth/userinfo. */
    anonymousPoints: number;
    /** Per authenticated client at POST /oauth/token, /oauth/revoke, /oauth/introspect and /oauth/device_authorization together. */
    oauthTokenRequests: number;
    /** Per network (IPv4 /24, IPv6 /48) at POST /oauth/register (dynamic client registration). */
    oauthRegistrations: number;
  };
  /** Where the counters live when every instance must share them; unset, each process counts in memory. */
  redisUrl?: string;
  /**
   * Starts every rate-limit key in Redis (`<prefix>rl:<budget>:<caller>`): deployments that share one Redis
   * (staging and production) need different prefixes, or they spend each other's budgets.
   */
  rateLimitKeyPrefix: string;
  /** Outgoing e-mail (src/mail/, docs/mail.md). */
  mail: {
    /** SMTP_URL: the server every mail goes through; unset, each mail is written to `<DATA_DIR>/mail/` as an .eml file. */
    smtpUrl?: string;
    /** MAIL_FROM: the sender of every mail. */
    from: MailAddress;
  };
  /** OpenTelemetry traces, exported over OTLP/HTTP; undefined (off) unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  tracing?: {
    /** The collector's base URL; spans go to `{endpoint}/v1/traces`. */
    endpoint: string;
    serviceName: string;
  };
}

/** Who the passkeys belong to: what authenticators bind each credential to. */
export interface WebAuthnRelyingParty {
  /** The RP ID: BASE_URL's host name (no port); a credential made for it works on this host only. */
  rpId: string;
  /** The name authenticators show beside the account. */
  rpName: string;
  /** BASE_URL's origin, the only one a response may come from. */
  origin: string;
}

/** The relying party of a site at this base URL. */
export function webAuthnRelyingParty(baseUrl: string): WebAuthnRelyingParty {
  const url = new URL(baseUrl);
  return { rpId: url.hostname.replace(/^\[|\]$/g, ''), rpName: 'Agora', origin: url.origin };
}

/** An e-mail address with an optional display name (nodemailer's address object). */
export interface MailAddress {
  name: string;
  address: string;
}

/** Whether /metrics is served at all: METRICS_TOKEN or METRICS_PORT is set. */
export function metricsServed(config: Pick<AppConfig, 'metrics'>): boolean {
  return config.metrics.token !== undefined || config.metrics.port !== undefined;
}

/** Whether the main listener serves /metrics (with its token): a token is set and no separate port is. */
export function metricsOnMainListener(config: Pick<AppConfig, 'metrics'>): boolean {
  return config.metrics.token !== undefined && config.metrics.port === undefined;
}

function isSmtpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
  } catch {
    return false;
  }
}

// A plain address: no spaces, quotes or angle brackets in the local part, a host name of letters, digits and hyphens.
const ADDRESS = /^[^\s<>@"(),;:\\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

/** `agora@example.com`, `Agora <agora@example.com>` or `"Agora, Events" <agora@example.com>`; undefined when it is none of these. */
export function parseMailbox(value: string): MailAddress | undefined {
  const text = value.trim();
  // Line breaks would let the value add headers of its own.
  if (/[\r\n]/.test(text)) return undefined;
  if (ADDRESS.test(text)) return { name: '', address: text };
  const named = /^(.*?)\s*<([^<>]+)>$/.exec(text);
  if (!named || !ADDRESS.test(named[2]!)) return undefined;
  let name = named[1]!.trim();
  if (/^".*"$/.test(name)) name = name.slice(1, -1).replace(/\\(.)/g, '$1');
  else if (/[<>"]/.test(name)) return undefined;
  return { name, address: named[2]! };
}

/** The default sender: agora@ the public host name, or agora@localhost when the base URL names an IP address. */
function defaultMailFrom(baseUrl: string): MailAddress {
  const host = new URL(baseUrl).hostname;
  const named = host.replace(/^\[|\]$/g, '');
  return { name: 'Agora', address: `agora@${ipaddr.isValid(named) ? 'localhost' : host}` };
}

function isCidr(value: string): boolean {
  try {
    ipaddr.parseCIDR(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * How much longer than the server's statement timeout the client waits for an answer: time for the
 * server's cancellation to arrive, so only a silent link makes the client give up on the connection.
 */
export const QUERY_TIMEOUT_GRACE_MS = 1000;

/** The longest a failing job may go on being retried (the backoff's worst case): within pg-boss's 14-day retention. */
const MAX_RETRY_HORIZON_SECONDS = 7 * 86400;

/** Query-cost points per rate-limit point: a GraphQL request costs its cost / 100, rounded up, at least 1. */
export const COST_PER_RATE_LIMIT_POINT = 100;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Validates the raw environment and returns the typed configuration, or throws ConfigError naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined>, cwd = process.cwd()): AppConfig {
  const relevant = Object.fromEntries(
    Object.keys(environmentSchema.shape).map((key) => [key, env[key] === '' && key !== 'DATABASE_URL' ? undefined : env[key]]),
  );
  const parsed = environmentSchema.safeParse(relevant);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? 'configuration');
        if (SECRET_VALUES.has(name) && relevant[name] !== undefined)
          return `${name}: ${issue.message} (the value is not shown: it may hold a password)`;
        return `${name}: ${issue.message} (got ${JSON.stringify(relevant[name] ?? null)})`;
      }),
    );
  }
  const e = parsed.data;
  const secretProblem = checkSecretKey(e.SECRET_KEY, e.NODE_ENV);
  if (secretProblem) throw new ConfigError([`SECRET_KEY: ${secretProblem}`]);
  if (e.PASSWORD_HASH_COST === 'test' && e.NODE_ENV !== 'test') {
    throw new ConfigError([
      `PASSWORD_HASH_COST: test is allowed only with NODE_ENV=test (it makes stored password hashes cheap to crack); unset it for standard (got NODE_ENV=${e.NODE_ENV})`,
    ]);
  }
  const metricsTokenProblem = e.METRICS_TOKEN === undefined ? undefined : checkToken(e.METRICS_TOKEN);
  if (metricsTokenProblem) throw new ConfigError([`METRICS_TOKEN: ${metricsTokenProblem}`]);
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT !== 0 && e.METRICS_PORT === e.PORT) {
    throw new ConfigError([
      `METRICS_PORT: must differ from PORT (got ${e.METRICS_PORT}); unset it to serve /metrics on PORT with METRICS_TOKEN`,
    ]);
  }
  if (e.RATE_LIMIT_ENABLED) {
    // A budget smaller than the costliest query the limits allow would refuse that query for ever.
    const problems = (
      [
        ['RATE_LIMIT_POINTS', e.RATE_LIMIT_POINTS, 'GRAPHQL_MAX_COST', e.GRAPHQL_MAX_COST],
        ['RATE_LIMIT_ANONYMOUS_POINTS', e.RATE_LIMIT_ANONYMOUS_POINTS, 'GRAPHQL_ANONYMOUS_MAX_COST', e.GRAPHQL_ANONYMOUS_MAX_COST],
      ] as const
    ).flatMap(([name, points, costName, cost]) => {
      const needed = Math.ceil(cost / COST_PER_RATE_LIMIT_POINT);
      return points < needed
        ? [
            `${name}: must be at least ${needed}, what the costliest query ${costName}=${cost} allows costs (got ${points}); or lower ${costName}`,
          ]
        : [];
    });
    if (problems.length > 0) throw new ConfigError(problems);
  }
  if (e.OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK > e.OAUTH_UNCLAIMED_APPLICATIONS_MAX) {
    throw new ConfigError([
      `OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK: must be at most OAUTH_UNCLAIMED_APPLICATIONS_MAX (${e.OAUTH_UNCLAIMED_APPLICATIONS_MAX}), a share of it (got ${e.OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK})`,
    ]);
  }
  if (e.OAUTH_REFRESH_TOKEN_IDLE_SECONDS > e.OAUTH_REFRESH_TOKEN_ABSOLUTE_SECONDS) {
    throw new ConfigError([
      `OAUTH_REFRESH_TOKEN_IDLE_SECONDS: must be at most OAUTH_REFRESH_TOKEN_ABSOLUTE_SECONDS (${e.OAUTH_REFRESH_TOKEN_ABSOLUTE_SECONDS}), as no refresh token outlives its family (got ${e.OAUTH_REFRESH_TOKEN_IDLE_SECONDS})`,
    ]);
  }
  const queryTimeoutMs =
    e.DATABASE_STATEMENT_TIMEOUT_SECONDS === 0 ? 0 : e.DATABASE_STATEMENT_TIMEOUT_SECONDS * 1000 + QUERY_TIMEOUT_GRACE_MS;
  // Liveness must leave the timeouts time to recover the pool first, or it restarts what would heal.
  const recoveredWithinMs = queryTimeoutMs + e.DATABASE_POOL_WAIT_TIMEOUT_MS;
  if (queryTimeoutMs > 0 && e.DATABASE_STALL_SECONDS * 1000 <= recoveredWithinMs) {
    throw new ConfigError([
      `DATABASE_STALL_SECONDS: must be more than DATABASE_STATEMENT_TIMEOUT_SECONDS + ${QUERY_TIMEOUT_GRACE_MS / 1000} s + DATABASE_POOL_WAIT_TIMEOUT_MS ` +
        `(${recoveredWithinMs / 1000} s), the time the timeouts take to recover the pool (got ${e.DATABASE_STALL_SECONDS})`,
    ]);
  }
  // pg-boss drops a job still waiting 14 days after it was due: the last retry must come well before.
  const retryHorizonSeconds = e.JOBS_RETRY_DELAY_SECONDS * (2 ** (e.JOBS_RETRY_LIMIT + 1) - 2);
  if (retryHorizonSeconds > MAX_RETRY_HORIZON_SECONDS) {
    throw new ConfigError([
      `JOBS_RETRY_LIMIT: with JOBS_RETRY_DELAY_SECONDS=${e.JOBS_RETRY_DELAY_SECONDS}, ${e.JOBS_RETRY_LIMIT} retries could last ` +
        `${Math.round(retryHorizonSeconds / 86400)} days; the last retry must come within 7 days (fewer retries, or a shorter delay)`,
    ]);
  }
  const workerCount = e.WORKERS === 'auto' ? Math.min(availableParallelism(), MAX_WORKERS) : e.WORKERS;
  if (workerCount > 1 && e.DATABASE_URL === undefined) {
    const asked = e.WORKERS === 'auto' ? `auto (${workerCount} cores here)` : String(workerCount);
    throw new ConfigError([
      `WORKERS: ${asked} processes need DATABASE_URL: the embedded database (DATABASE_URL unset) belongs to one process. ` +
        'Set DATABASE_URL to a PostgreSQL server, or WORKERS=1',
    ]);
  }
  if (e.DATABASE_URL === undefined && (e.DATABASE_DIRECT_URL !== undefined || e.DATABASE_POOLING !== 'session')) {
    throw new ConfigError([
      `${e.DATABASE_DIRECT_URL !== undefined ? 'DATABASE_DIRECT_URL' : 'DATABASE_POOLING'}: needs DATABASE_URL (the embedded database has no pooler)`,
    ]);
  }
  if (e.DATABASE_POOLING === 'transaction' && e.DATABASE_DIRECT_URL === undefined) {
    throw new ConfigError([
      'DATABASE_DIRECT_URL: required with DATABASE_POOLING=transaction: a direct (or session-mode) connection to the same database, ' +
        'for LISTEN and the migration lock, which a pooler in transaction mode cannot carry',
    ]);
  }
  return {
    env: e.NODE_ENV,
    passwordHashCost: e.PASSWORD_HASH_COST,
    host: e.HOST,
    port: e.PORT,
    // Unset, it follows PORT, so changing only the port keeps forms and redirects working.
    baseUrl: e.BASE_URL ?? `http://localhost:${e.PORT}`,
    trustProxy: e.TRUST_PROXY,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_SECONDS * 1000,
    workers: workerCount,
    logLevel: e.LOG_LEVEL,
    database: {
      url: e.DATABASE_URL,
      directUrl: e.DATABASE_DIRECT_URL,
      pooling: e.DATABASE_POOLING,
      dataDir: isAbsolute(e.DATA_DIR) ? e.DATA_DIR : resolve(cwd, e.DATA_DIR),
      poolSize: e.DATABASE_POOL_SIZE,
      connectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_SECONDS * 1000,
      statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_SECONDS * 1000,
      queryTimeoutMs,
      poolWaitTimeoutMs: e.DATABASE_POOL_WAIT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: e.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS * 1000,
      keepAliveMs: e.DATABASE_KEEPALIVE_SECONDS * 1000,
      stallMs: e.DATABASE_STALL_SECONDS * 1000,
      migrationsRun: e.MIGRATIONS_RUN,
    },
    auth: {
      personalTokenLastUsedIntervalMs: e.PERSONAL_TOKEN_LAST_USED_INTERVAL_SECONDS * 1000,
      personalTokensMaxActive: e.PERSONAL_TOKENS_MAX_ACTIVE,
      cacheTtlMs: e.AUTH_CACHE_TTL_SECONDS * 1000,
    },
    secretKey: e.SECRET_KEY,
    secureCookies: (e.BASE_URL ?? '').startsWith('https:'),
    webAuthn: webAuthnRelyingParty(e.BASE_URL ?? `http://localhost:${e.PORT}`),
    sessionTtlMs: e.SESSION_TTL_HOURS * 3_600_000,
    housekeepingIntervalMs: e.HOUSEKEEPING_INTERVAL_SECONDS * 1000,
    eventsWebUrl: e.EVENTS_WEB_URL,
    attendeeMail: e.ATTENDEE_MAIL,
    webhooks: {
      allowPrivateTargets: e.WEBHOOKS_ALLOW_PRIVATE_TARGETS,
      allowHttp: e.WEBHOOKS_ALLOW_HTTP,
      concurrency: e.WEBHOOKS_CONCURRENCY,
    },
    jobs: { concurrency: e.JOBS_CONCURRENCY, retryDelaySeconds: e.JOBS_RETRY_DELAY_SECONDS, retryLimit: e.JOBS_RETRY_LIMIT },
    oauth: {
      codeTtlMs: e.OAUTH_CODE_TTL_SECONDS * 1000,
      deviceCodeTtlMs: e.OAUTH_DEVICE_CODE_TTL_SECONDS * 1000,
      accessTokenTtlMs: 3_600_000,
      jwtAccessTokenTtlMs: e.OAUTH_JWT_ACCESS_TOKEN_TTL_SECONDS * 1000,
      refreshTokenIdleMs: e.OAUTH_REFRESH_TOKEN_IDLE_SECONDS * 1000,
      refreshTokenAbsoluteMs: e.OAUTH_REFRESH_TOKEN_ABSOLUTE_SECONDS * 1000,
      dynamicRegistration: e.OAUTH_DYNAMIC_REGISTRATION,
      unclaimedApplicationTtlMs: e.OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS * 1000,
      unclaimedApplicationsMax: e.OAUTH_UNCLAIMED_APPLICATIONS_MAX,
      unclaimedApplicationsPerNetwork: e.OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK,
      clientJwks: {
        policy: { allowPrivateTargets: e.OAUTH_JWKS_URI_ALLOW_PRIVATE_TARGETS, allowHttp: e.OAUTH_JWKS_URI_ALLOW_HTTP },
        cacheMs: e.OAUTH_JWKS_URI_CACHE_SECONDS * 1000,
        refetchIntervalMs: e.OAUTH_JWKS_URI_REFETCH_SECONDS * 1000,
      },
    },
    graphql: {
      limits: {
        authenticated: { maxDepth: e.GRAPHQL_MAX_DEPTH, maxCost: e.GRAPHQL_MAX_COST },
        anonymous: { maxDepth: e.GRAPHQL_ANONYMOUS_MAX_DEPTH, maxCost: e.GRAPHQL_ANONYMOUS_MAX_COST },
      },
    },
    legacyApi: {
      sunset: new Date(`${e.LEGACY_API_SUNSET}T00:00:00Z`),
      migrationGuideUrl: e.LEGACY_API_MIGRATION_GUIDE_URL ?? `${e.BASE_URL ?? `http://localhost:${e.PORT}`}/api/migration-guide`,
    },
    metrics: { token: e.METRICS_TOKEN, port: e.METRICS_PORT, host: e.METRICS_HOST ?? e.HOST },
    rateLimits: e.RATE_LIMIT_ENABLED
      ? {
          windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS,
          tokenPoints: e.RATE_LIMIT_POINTS,
          anonymousPoints: e.RATE_LIMIT_ANONYMOUS_POINTS,
          oauthTokenRequests: e.RATE_LIMIT_OAUTH_TOKEN_REQUESTS,
          oauthRegistrations: e.RATE_LIMIT_OAUTH_REGISTRATIONS,
        }
      : undefined,
    redisUrl: e.REDIS_URL,
    rateLimitKeyPrefix: e.RATE_LIMIT_KEY_PREFIX,
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM ?? defaultMailFrom(e.BASE_URL ?? `http://localhost:${e.PORT}`) },
    tracing: e.OTEL_EXPORTER_OTLP_ENDPOINT ? { endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: e.OTEL_SERVICE_NAME } : undefined,
  };
}

const PLACEHOLDER = /^(change[-_ ]?me|secret|password|example|placeholder|your[-_ ]?secret)/i;

function checkSecretKey(value: string | undefined, env: string): string | undefined {
  if (value === undefined) {
    return env === 'production' ? 'is required in production: 32 or more random characters, such as `openssl rand -base64 32`' : undefined;
  }
  return checkToken(value);
}

/** A shared secret: long, and not a placeholder. */
function checkToken(value: string): string | undefined {
  if (value.length < 32) return 'must be at least 32 characters (use `openssl rand -base64 32`)';
  if (PLACEHOLDER.test(value) || new Set(value).size < 10) return 'looks like a placeholder; use 32 or more random characters';
  return undefined;
}

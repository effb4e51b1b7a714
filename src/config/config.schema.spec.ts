import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { ConfigError, loadConfig, metricsOnMainListener } from './config.schema.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env, '/srv/agora');
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('loadConfig', () => {
  it('derives the passkeys’ relying party from BASE_URL: its host name as RP ID, its origin as the only origin', () => {
    expect(loadConfig({}, '/srv/agora').webAuthn).toEqual({ rpId: 'localhost', rpName: 'Agora', origin: 'http://localhost:3000' });
    expect(loadConfig({ BASE_URL: 'https://Agora.Example.com:8443/' }, '/srv/agora').webAuthn).toEqual({
      rpId: 'agora.example.com',
      rpName: 'Agora',
      origin: 'https://agora.example.com:8443',
    });
  });

  it('hashes passwords at the standard cost unless NODE_ENV=test asks for the test cost', () => {
    expect(loadConfig({}, '/srv/agora').passwordHashCost).toBe('standard');
    expect(loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: 'test' }, '/srv/agora').passwordHashCost).toBe('test');
    for (const NODE_ENV of ['development', 'production']) {
      const env = { NODE_ENV, PASSWORD_HASH_COST: 'test', SECRET_KEY: randomBytes(32).toString('base64') };
      expect(problems(env)).toEqual([expect.stringMatching(/^PASSWORD_HASH_COST: test is allowed only with NODE_ENV=test/)]);
    }
    expect(problems({ PASSWORD_HASH_COST: 'cheap' })).toEqual([expect.stringMatching(/^PASSWORD_HASH_COST: /)]);
  });

  it('applies the documented defaults', () => {
    const config = loadConfig({}, '/srv/agora');
    expect(config).toMatchObject({
      env: 'development',
      host: 'localhost',
      port: 3000,
      baseUrl: 'http://localhost:3000',
      secureCookies: false,
    });
    expect(config.database).toMatchObject({ url: undefined, dataDir: '/srv/agora/data', poolSize: 10, migrationsRun: true });
    expect(config.oauth).toEqual({
      codeTtlMs: 60_000,
      accessTokenTtlMs: 3_600_000,
      jwtAccessTokenTtlMs: 300_000,
      refreshTokenIdleMs: 14 * 86_400_000,
      refreshTokenAbsoluteMs: 90 * 86_400_000,
      deviceCodeTtlMs: 600_000,
      dynamicRegistration: false,
      unclaimedApplicationTtlMs: 86_400_000,
      unclaimedApplicationsMax: 100_000,
      unclaimedApplicationsPerNetwork: 20,
      clientJwks: { policy: { allowPrivateTargets: false, allowHttp: false }, cacheMs: 300_000, refetchIntervalMs: 60_000 },
    });
    expect(config.workers).toBe(1);
  });

  describe('database timeouts', () => {
    it('bounds every wait by default', () => {
      expect(loadConfig({}, '/srv/agora').database).toMatchObject({
        connectTimeoutMs: 10_000,
        statementTimeoutMs: 10_000,
        queryTimeoutMs: 11_000,
        poolWaitTimeoutMs: 2_000,
        idleInTransactionTimeoutMs: 60_000,
        keepAliveMs: 30_000,
        stallMs: 60_000,
      });
    });

    it('turns the statement timeouts off with 0, server and client side together', () => {
      const database = loadConfig({ DATABASE_STATEMENT_TIMEOUT_SECONDS: '0', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS: '0' }).database;
      expect(database).toMatchObject({ statementTimeoutMs: 0, queryTimeoutMs: 0, idleInTransactionTimeoutMs: 0 });
    });

    it.each([
      ['DATABASE_STATEMENT_TIMEOUT_SECONDS', '-1', 'must be between 0 and 3600'],
      ['DATABASE_STATEMENT_TIMEOUT_SECONDS', '1.5', 'must be a whole number'],
      ['DATABASE_POOL_WAIT_TIMEOUT_MS', '10', 'must be between 50 and 600000'],
      ['DATABASE_POOL_WAIT_TIMEOUT_MS', 'soon', 'must be a number'],
      ['DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS', '86401', 'must be between 0 and 86400'],
      ['DATABASE_KEEPALIVE_SECONDS', '0', 'must be at least 1'],
      ['DATABASE_STALL_SECONDS', '0', 'must be at least 1'],
    ])('refuses %s=%s', (name, value, message) => {
      expect(problems({ [name]: value })).toEqual([`${name}: ${message} (got ${JSON.stringify(value)})`]);
    });

    it('refuses a liveness bound that would restart a pool the timeouts are still recovering', () => {
      expect(problems({ DATABASE_STATEMENT_TIMEOUT_SECONDS: '30', DATABASE_STALL_SECONDS: '32' })).toEqual([
        'DATABASE_STALL_SECONDS: must be more than DATABASE_STATEMENT_TIMEOUT_SECONDS + 1 s + DATABASE_POOL_WAIT_TIMEOUT_MS (33 s), the time the timeouts take to recover the pool (got 32)',
      ]);
      expect(loadConfig({ DATABASE_STATEMENT_TIMEOUT_SECONDS: '30', DATABASE_STALL_SECONDS: '34' }).database.stallMs).toBe(34_000);
      expect(loadConfig({ DATABASE_STATEMENT_TIMEOUT_SECONDS: '0', DATABASE_STALL_SECONDS: '1' }).database.stallMs).toBe(1_000);
    });
  });

  it('takes how DATABASE_URL pools sessions, and requires DATABASE_DIRECT_URL behind a pooler in transaction mode', () => {
    const DATABASE_URL = 'postgres://agora@pooler.example.internal:6432/agora';
    const DATABASE_DIRECT_URL = 'postgres://agora@db.example.internal:5432/agora';
    expect(loadConfig({ DATABASE_URL }).database).toMatchObject({ pooling: 'session', directUrl: undefined });
    expect(loadConfig({ DATABASE_URL, DATABASE_POOLING: 'transaction', DATABASE_DIRECT_URL }).database).toMatchObject({
      url: DATABASE_URL,
      pooling: 'transaction',
      directUrl: DATABASE_DIRECT_URL,
    });
    expect(loadConfig({ DATABASE_URL, DATABASE_DIRECT_URL }).database).toMatchObject({
      pooling: 'session',
      directUrl: DATABASE_DIRECT_URL,
    });
    expect(problems({ DATABASE_URL, DATABASE_POOLING: 'transaction' })).toEqual([
      expect.stringMatching(/^DATABASE_DIRECT_URL: required with DATABASE_POOLING=transaction: a direct \(or session-mode\) connection/),
    ]);
    expect(problems({ DATABASE_URL, DATABASE_POOLING: 'statement' })).toEqual([expect.stringMatching(/^DATABASE_POOLING: .*"statement"/)]);
    expect(problems({ DATABASE_URL, DATABASE_DIRECT_URL: 'mysql://db' })).toEqual([
      expect.stringMatching(/^DATABASE_DIRECT_URL: must be a postgres:/),
    ]);
    expect(problems({ DATABASE_DIRECT_URL })).toEqual([expect.stringMatching(/^DATABASE_DIRECT_URL: needs DATABASE_URL/)]);
    expect(problems({ DATABASE_POOLING: 'transaction' })).toEqual([expect.stringMatching(/^DATABASE_POOLING: needs DATABASE_URL/)]);
    // Empty is unset, as for every other setting.
    expect(loadConfig({ DATABASE_URL, DATABASE_DIRECT_URL: '', DATABASE_POOLING: '' }).database).toMatchObject({
      pooling: 'session',
      directUrl: undefined,
    });
  });

  it('derives BASE_URL from PORT when only the port is set', () => {
    expect(loadConfig({ PORT: '3456' }).baseUrl).toBe('http://localhost:3456');
  });

  it('drops a trailing slash from BASE_URL and sets Secure cookies for https', () => {
    const config = loadConfig({ BASE_URL: 'https://agora.example.com/' });
    expect(config.baseUrl).toBe('https://agora.example.com');
    expect(config.secureCookies).toBe(true);
  });

  it('names every bad variable', () => {
    expect(problems({ PORT: 'x', BASE_URL: 'ftp://a', OAUTH_CODE_TTL_SECONDS: '0' }).map((p) => p.split(':')[0])).toEqual([
      'PORT',
      'BASE_URL',
      'OAUTH_CODE_TTL_SECONDS',
    ]);
  });

  it('reads OAUTH_DEVICE_CODE_TTL_SECONDS, up to an hour', () => {
    expect(loadConfig({ OAUTH_DEVICE_CODE_TTL_SECONDS: '900' }, '/srv/agora').oauth.deviceCodeTtlMs).toBe(900_000);
    expect(problems({ OAUTH_DEVICE_CODE_TTL_SECONDS: '3601' })[0]).toMatch(/^OAUTH_DEVICE_CODE_TTL_SECONDS: /);
    expect(problems({ OAUTH_DEVICE_CODE_TTL_SECONDS: '0' })[0]).toMatch(/^OAUTH_DEVICE_CODE_TTL_SECONDS: /);
  });

  it('requires a real SECRET_KEY in production and accepts any random one', () => {
    expect(problems({ NODE_ENV: 'production' })[0]).toMatch(/^SECRET_KEY: is required in production/);
    expect(problems({ NODE_ENV: 'production', SECRET_KEY: 'short' })[0]).toMatch(/at least 32 characters/);
    expect(problems({ NODE_ENV: 'production', SECRET_KEY: 'change-me-change-me-change-me-change-me' })[0]).toMatch(/placeholder/);
    expect(problems({ NODE_ENV: 'production', SECRET_KEY: 'x'.repeat(40) })[0]).toMatch(/placeholder/);
    for (let i = 0; i < 300; i++) {
      expect(problems({ NODE_ENV: 'production', SECRET_KEY: randomBytes(32).toString('base64url') })).toEqual([]);
    }
  });

  it('serves no metrics and traces nothing by default', () => {
    const config = loadConfig({ HOST: '0.0.0.0' });
    expect(config.metrics).toEqual({ token: undefined, port: undefined, host: '0.0.0.0' });
    expect(metricsOnMainListener(config)).toBe(false);
    expect(config.tracing).toBeUndefined();
  });

  it('serves /metrics on the main listener with METRICS_TOKEN alone, on its own port with METRICS_PORT', () => {
    const token = randomBytes(32).toString('base64url');
    expect(metricsOnMainListener(loadConfig({ METRICS_TOKEN: token }))).toBe(true);
    const separate = loadConfig({ METRICS_TOKEN: token, METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' });
    expect(metricsOnMainListener(separate)).toBe(false);
    expect(separate.metrics).toEqual({ token, port: 9464, host: '10.0.0.5' });
  });

  it('refuses a weak METRICS_TOKEN and a METRICS_PORT equal to PORT', () => {
    expect(problems({ METRICS_TOKEN: 'short' })).toEqual([expect.stringMatching(/^METRICS_TOKEN: must be at least 32 characters/)]);
    expect(problems({ METRICS_TOKEN: 'changeme-changeme-changeme-changeme-1234' })).toEqual([
      expect.stringMatching(/^METRICS_TOKEN: looks like a placeholder/),
    ]);
    expect(problems({ PORT: '3000', METRICS_PORT: '3000' })).toEqual([expect.stringMatching(/^METRICS_PORT: must differ from PORT/)]);
    expect(problems({ METRICS_PORT: 'abc' })).toEqual([expect.stringMatching(/^METRICS_PORT: must be a number/)]);
  });

  it('turns tracing on with OTEL_EXPORTER_OTLP_ENDPOINT, and refuses one that is not an http(s) URL', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      endpoint: 'http://collector:4318',
      serviceName: 'agora',
    });
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' })).toEqual([expect.stringMatching(/^OTEL_EXPORTER_OTLP_ENDPOINT: /)]);
  });

  it('keeps dynamic client registration off unless OAUTH_DYNAMIC_REGISTRATION says true', () => {
    expect(loadConfig({ OAUTH_DYNAMIC_REGISTRATION: 'true' }).oauth.dynamicRegistration).toBe(true);
    expect(loadConfig({ OAUTH_DYNAMIC_REGISTRATION: 'false' }).oauth.dynamicRegistration).toBe(false);
    expect(problems({ OAUTH_DYNAMIC_REGISTRATION: 'open' })).toEqual([
      expect.stringMatching(/^OAUTH_DYNAMIC_REGISTRATION: must be true or false/),
    ]);
    expect(problems({ RATE_LIMIT_OAUTH_REGISTRATIONS: '0' })).toEqual([
      expect.stringMatching(/^RATE_LIMIT_OAUTH_REGISTRATIONS: must be at least 1/),
    ]);
  });

  it('takes OAUTH_JWT_ACCESS_TOKEN_TTL_SECONDS from a minute to 15 minutes: the bound on a revoked JWT access token', () => {
    expect(loadConfig({ OAUTH_JWT_ACCESS_TOKEN_TTL_SECONDS: '60' }).oauth.jwtAccessTokenTtlMs).toBe(60_000);
    expect(loadConfig({ OAUTH_JWT_ACCESS_TOKEN_TTL_SECONDS: '900' }).oauth.jwtAccessTokenTtlMs).toBe(900_000);
    expect(problems({ OAUTH_JWT_ACCESS_TOKEN_TTL_SECONDS: '3600' })).toEqual([
      'OAUTH_JWT_ACCESS_TOKEN_TTL_SECONDS: must be between 60 and 900 (got "3600")',
    ]);
    expect(problems({ OAUTH_JWT_ACCESS_TOKEN_TTL_SECONDS: '59' })).toHaveLength(1);
  });

  it('takes OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS from an hour to a year', () => {
    expect(loadConfig({ OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS: '3600' }).oauth.unclaimedApplicationTtlMs).toBe(3_600_000);
    expect(loadConfig({ OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS: '31536000' }).oauth.unclaimedApplicationTtlMs).toBe(31_536_000_000);
    expect(() => loadConfig({ OAUTH_UNCLAIMED_APPLICATIONS_MAX: '10', OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK: '11' })).toThrow(
      /OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK: must be at most OAUTH_UNCLAIMED_APPLICATIONS_MAX \(10\)/,
    );
    expect(problems({ OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS: '3599' })).toEqual([
      'OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS: must be between 3600 and 31536000 (got "3599")',
    ]);
    for (const bad of ['31536001', '0', '-1', '86400.5', 'a day']) {
      expect(problems({ OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS: bad })).toEqual([
        expect.stringMatching(/^OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS: must be /),
      ]);
    }
  });

  it('limits the API by default, in memory, and takes the limits, Redis and an off switch as settings', () => {
    expect(loadConfig({}).rateLimits).toEqual({
      windowSeconds: 3600,
      tokenPoints: 5000,
      anonymousPoints: 1000,
      oauthTokenRequests: 10000,
      oauthRegistrations: 20,
    });
    expect(loadConfig({}).redisUrl).toBeUndefined();
    const set = loadConfig({
      RATE_LIMIT_WINDOW_SECONDS: '60',
      RATE_LIMIT_POINTS: '100',
      RATE_LIMIT_ANONYMOUS_POINTS: '10',
      GRAPHQL_MAX_COST: '10000',
      GRAPHQL_ANONYMOUS_MAX_COST: '1000',
      RATE_LIMIT_OAUTH_TOKEN_REQUESTS: '5',
      RATE_LIMIT_OAUTH_REGISTRATIONS: '2',
      REDIS_URL: 'rediss://:pw@redis.internal:6380/2',
    });
    expect(set.rateLimits).toEqual({
      windowSeconds: 60,
      tokenPoints: 100,
      anonymousPoints: 10,
      oauthTokenRequests: 5,
      oauthRegistrations: 2,
    });
    expect(set.redisUrl).toBe('rediss://:pw@redis.internal:6380/2');
    expect(loadConfig({ RATE_LIMIT_ENABLED: 'false' }).rateLimits).toBeUndefined();
    expect(problems({ REDIS_URL: 'localhost:6379' })).toEqual([
      expect.stringMatching(/^REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/),
    ]);
    expect(problems({ RATE_LIMIT_POINTS: '0', RATE_LIMIT_WINDOW_SECONDS: '1.5' }).map((p) => p.split(':')[0])).toEqual([
      'RATE_LIMIT_WINDOW_SECONDS',
      'RATE_LIMIT_POINTS',
    ]);
    expect(problems({ RATE_LIMIT_ENABLED: 'maybe' })).toEqual([expect.stringMatching(/^RATE_LIMIT_ENABLED: must be true or false/)]);
  });

  it('takes refresh token lifetimes, and refuses an idle lifetime longer than the absolute one', () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      OAUTH_REFRESH_TOKEN_IDLE_SECONDS: '3600',
      OAUTH_REFRESH_TOKEN_ABSOLUTE_SECONDS: '86400',
    });
    expect(config.oauth).toMatchObject({ refreshTokenIdleMs: 3_600_000, refreshTokenAbsoluteMs: 86_400_000 });
    expect(problems({ OAUTH_REFRESH_TOKEN_IDLE_SECONDS: '7776001' })).toEqual([
      expect.stringMatching(/^OAUTH_REFRESH_TOKEN_IDLE_SECONDS: must be at most OAUTH_REFRESH_TOKEN_ABSOLUTE_SECONDS \(7776000\)/),
    ]);
    expect(problems({ OAUTH_REFRESH_TOKEN_ABSOLUTE_SECONDS: '0' })).toEqual([
      expect.stringMatching(/^OAUTH_REFRESH_TOKEN_ABSOLUTE_SECONDS: must be at least 1/),
    ]);
  });

  it('refuses a rate-limit budget smaller than the costliest query the GraphQL limits allow', () => {
    expect(problems({ RATE_LIMIT_ANONYMOUS_POINTS: '10' })).toEqual([
      'RATE_LIMIT_ANONYMOUS_POINTS: must be at least 50, what the costliest query GRAPHQL_ANONYMOUS_MAX_COST=5000 allows costs (got 10); or lower GRAPHQL_ANONYMOUS_MAX_COST',
    ]);
    expect(problems({ RATE_LIMIT_POINTS: '199' })).toEqual([expect.stringMatching(/^RATE_LIMIT_POINTS: must be at least 200/)]);
    expect(loadConfig({ RATE_LIMIT_ANONYMOUS_POINTS: '10', GRAPHQL_ANONYMOUS_MAX_COST: '1000' }).rateLimits!.anonymousPoints).toBe(10);
    expect(loadConfig({ RATE_LIMIT_ANONYMOUS_POINTS: '10', RATE_LIMIT_ENABLED: 'false' }).rateLimits).toBeUndefined();
  });

  it('trusts one proxy for TRUST_PROXY=true, or the number or addresses given, and refuses anything else', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,fd00::/8' }).trustProxy).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);
    expect(problems({ TRUST_PROXY: 'loopback' })).toEqual([
      expect.stringMatching(/^TRUST_PROXY: must be false, true \(one proxy\).*"loopback"/),
    ]);
    expect(problems({ TRUST_PROXY: '11' })).toEqual([expect.stringMatching(/^TRUST_PROXY: /)]);
  });

  describe('WORKERS', () => {
    const DATABASE_URL = 'postgres://agora@db.example.internal:5432/agora';

    it('runs one process by default, and as many as asked, or one per core with auto, on a PostgreSQL server', () => {
      expect(loadConfig({ DATABASE_URL }).workers).toBe(1);
      expect(loadConfig({ DATABASE_URL, WORKERS: '4' }).workers).toBe(4);
      expect(loadConfig({ DATABASE_URL, WORKERS: ' 2 ' }).workers).toBe(2);
      expect(loadConfig({ DATABASE_URL, WORKERS: '256' }).workers).toBe(256);
      expect(loadConfig({ DATABASE_URL, WORKERS: 'auto' }).workers).toBe(availableParallelism());
    });

    it('keeps the embedded database at one process', () => {
      expect(loadConfig({ WORKERS: '1' }).workers).toBe(1);
      expect(problems({ WORKERS: '2' })).toEqual([
        'WORKERS: 2 processes need DATABASE_URL: the embedded database (DATABASE_URL unset) belongs to one process. ' +
          'Set DATABASE_URL to a PostgreSQL server, or WORKERS=1',
      ]);
      expect(problems({ WORKERS: '2', DATABASE_URL: '' })).toEqual([expect.stringMatching(/^WORKERS: 2 processes need DATABASE_URL/)]);
      if (availableParallelism() > 1) {
        expect(problems({ WORKERS: 'auto' })).toEqual([
          expect.stringMatching(new RegExp(`^WORKERS: auto \\(${availableParallelism()} cores here\\) processes need DATABASE_URL`)),
        ]);
      } else {
        expect(loadConfig({ WORKERS: 'auto' }).workers).toBe(1);
      }
    });

    it('refuses what is not a whole number from 1 to 256 or auto, naming the variable and the value', () => {
      for (const bad of ['0', '-1', 'abc', '1.5', '2e1', '257', '100000', 'AUTO', 'auto2']) {
        expect(problems({ DATABASE_URL, WORKERS: bad })).toEqual([
          `WORKERS: must be a whole number from 1 to 256, or auto (one per core) (got ${JSON.stringify(bad)})`,
        ]);
      }
    });
  });

  describe('jobs and attendee mail', () => {
    it('has defaults whose retries end within hours', () => {
      expect(loadConfig({}).jobs).toEqual({ concurrency: 5, retryDelaySeconds: 10, retryLimit: 10 });
      expect(loadConfig({}).attendeeMail).toBe(true);
      expect(loadConfig({ ATTENDEE_MAIL: 'false' }).attendeeMail).toBe(false);
      expect(loadConfig({}).webhooks).toEqual({ allowPrivateTargets: false, allowHttp: false, concurrency: 25 });
      expect(loadConfig({ WEBHOOKS_CONCURRENCY: '100' }).webhooks.concurrency).toBe(100);
      expect(problems({ WEBHOOKS_CONCURRENCY: '0' })[0]).toMatch(/^WEBHOOKS_CONCURRENCY: /);
    });

    it('refuses retries that would outlast the queue keeping the job (a week at most)', () => {
      expect(problems({ JOBS_RETRY_DELAY_SECONDS: '3600', JOBS_RETRY_LIMIT: '10' })).toEqual([
        'JOBS_RETRY_LIMIT: with JOBS_RETRY_DELAY_SECONDS=3600, 10 retries could last 85 days; the last retry must come within 7 days (fewer retries, or a shorter delay)',
      ]);
      expect(loadConfig({ JOBS_RETRY_DELAY_SECONDS: '60', JOBS_RETRY_LIMIT: '12' }).jobs.retryLimit).toBe(12);
    });

    it('refuses bad numbers and an events page address without a place for the event', () => {
      expect(problems({ JOBS_CONCURRENCY: '0' })[0]).toMatch(/^JOBS_CONCURRENCY: /);
      expect(problems({ JOBS_RETRY_LIMIT: '31' })[0]).toMatch(/^JOBS_RETRY_LIMIT: /);
      expect(problems({ EVENTS_WEB_URL: 'https://events.example.com/' })).toEqual([
        'EVENTS_WEB_URL: must contain {id} or {slug}, e.g. https://events.example.com/e/{slug} (got "https://events.example.com/")',
      ]);
      expect(problems({ EVENTS_WEB_URL: 'javascript:alert(1)//{id}' })[0]).toMatch(
        /^EVENTS_WEB_URL: must be an http:\/\/ or https:\/\/ address/,
      );
      expect(loadConfig({ EVENTS_WEB_URL: 'https://events.example.com/e/{slug}' }).eventsWebUrl).toBe(
        'https://events.example.com/e/{slug}',
      );
    });
  });

  describe('mail', () => {
    it('writes mail to files from Agora at the public host by default', () => {
      expect(loadConfig({}).mail).toEqual({ smtpUrl: undefined, from: { name: 'Agora', address: 'agora@localhost' } });
      expect(loadConfig({ BASE_URL: 'https://events.example.org' }).mail.from).toEqual({
        name: 'Agora',
        address: 'agora@events.example.org',
      });
      expect(loadConfig({ BASE_URL: 'http://192.0.2.7:3000' }).mail.from.address).toBe('agora@localhost');
    });

    it('takes an smtp:// or smtps:// SMTP_URL with credentials', () => {
      for (const url of ['smtp://localhost:1025', 'smtps://user:p%40ss@smtp.example.com:465', 'smtp://mail.internal']) {
        expect(loadConfig({ SMTP_URL: url }).mail.smtpUrl).toBe(url);
      }
    });

    it('refuses any other SMTP_URL in one line that never shows the value, which may hold a password', () => {
      for (const bad of ['http://user:hunter2@smtp.example.com', 'smtp.example.com:587', 'smtp://', 'user:hunter2']) {
        const found = problems({ SMTP_URL: bad });
        expect(found).toEqual([
          'SMTP_URL: must be an smtp:// or smtps:// URL such as smtps://user:password@smtp.example.com:465 (unset it to write mail to files) (the value is not shown: it may hold a password)',
        ]);
        expect(found.join('\n')).not.toContain('hunter2');
      }
    });

    it('takes MAIL_FROM as an address with an optional display name', () => {
      expect(loadConfig({ MAIL_FROM: 'events@example.com' }).mail.from).toEqual({ name: '', address: 'events@example.com' });
      expect(loadConfig({ MAIL_FROM: 'Agora Events <events@example.com>' }).mail.from).toEqual({
        name: 'Agora Events',
        address: 'events@example.com',
      });
      expect(loadConfig({ MAIL_FROM: '"Agora, Events" <events@example.com>' }).mail.from).toEqual({
        name: 'Agora, Events',
        address: 'events@example.com',
      });
    });

    it.each([
      'not an address',
      'events@',
      '@example.com',
      'Agora <events@example.com',
      'Agora <a@b> <c@d>',
      'a b@example.com',
      'Agora\r\nBcc: x@y <a@example.com>',
    ])('refuses MAIL_FROM=%j', (bad) => {
      expect(problems({ MAIL_FROM: bad })).toEqual([
        `MAIL_FROM: must be an e-mail address, optionally with a display name, such as Agora <agora@example.com> (got ${JSON.stringify(bad)})`,
      ]);
    });
  });
});

import { Inject, Injectable } from '@nestjs/common';
import cluster from 'node:cluster';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { metricsServed } from '../config/config.schema.js';
import { OwnedPool } from '../database/owned-pool.js';
import { aggregatedScrape } from './cluster-metrics.js';
import { PlainCount, PlainCounter, PlainHistogram, PlainObservations } from './plain-series.js';

/** One job queue's state at a scrape (src/jobs/queue-states.ts reads it). */
export interface QueueGaugeState {
  queue: string;
  /** Jobs due now and not taken yet (new, or waiting for a retry whose time has come). */
  waiting: number;
  /** Jobs due later: a retry's backoff, or a job to run at a set time. */
  scheduled: number;
  active: number;
  /** Jobs whose retries ran out: the dead letters. */
  failed: number;
  /** How long the oldest waiting job has been due, in seconds; 0 when none waits. */
  oldestWaitingSeconds: number;
}

/** Webhook endpoints by state, and the deliveries due (src/webhooks/ reads them). */
export interface WebhookGaugeState {
  endpoints: Record<'active' | 'paused' | 'disabled', number>;
  /** Scheduled deliveries of active endpoints whose next attempt is due already. */
  due: number;
  /** Deliveries queued for longer than their attempt job can live (the sweeper queues them again). */
  stuck: number;
}

/** Seconds; from a cached read to a slow page of events. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The route label of a request no route matched (404s, whatever their path). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Why the API refused a request's credentials (the RFC 6750 error, or none sent). */
export type AuthRefusal = 'missing_credentials' | 'invalid_token' | 'insufficient_scope';

/** Which throttle refused: sign-in attempts, or sign-ups from one address (accounts created, "taken" answers). */
export type ThrottleLimit = 'sign_in' | 'sign_up_accounts' | 'sign_up_failures' | 'device_code' | 'second_step' | 'passkey' | 'link_mail';

/** Where a password was refused: the sign-in page, or a password re-check on the security page. */
export type PasswordForm = 'sign_in' | 'security';

/** A GraphQL operation's series: answered without and with errors, and its durations. */
export interface GraphqlOperationSeries {
  ok: PlainCount;
  error: PlainCount;
  duration: PlainObservations;
}

/** One route's series: a count per status code (made on the status's first response) and its durations. */
export class HttpRouteSeries {
  private readonly byStatus = new Map<number, PlainCount>();
  private readonly duration: PlainObservations;

  constructor(
    private readonly requests: PlainCounter,
    duration: PlainHistogram,
    private readonly method: string,
    private readonly route: string,
  ) {
    this.duration = duration.child(method, route);
  }

  record(status: number, seconds: number): void {
    let count = this.byStatus.get(status);
    if (count === undefined) this.byStatus.set(status, (count = this.requests.child(this.method, this.route, String(status))));
    count.value++;
    this.duration.observe(seconds);
  }
}

/**
 * Every Prometheus metric of the service, in one registry of this application (docs/operations.md,
 * "Metrics", lists them). Label values come from fixed sets (route patterns, status codes, protocol
 * error codes, a bounded set of GraphQL operation names), never from raw input, so the series stay few.
 * Features record through the methods below; the per-request ones reuse their label children, so a
 * request costs a map lookup, a counter increment and a histogram observation.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  /** Whether /metrics is served at all (METRICS_TOKEN or METRICS_PORT); the per-request hooks attach only then. */
  readonly enabled: boolean;

  // The per-request series: resolved once per route and per operation, updated with plain arithmetic.
  private readonly httpRequests = new PlainCounter(
    'agora_http_requests_total',
    'HTTP requests answered, by method, route pattern and status code',
    ['method', 'route', 'status'],
    this.registry,
  );
  private readonly httpDuration = new PlainHistogram(
    'agora_http_request_duration_seconds',
    'Time from receiving an HTTP request to the end of its response, by method and route pattern',
    ['method', 'route'],
    LATENCY_BUCKETS,
    this.registry,
  );
  private readonly graphqlOperations = new PlainCounter(
    'agora_graphql_operations_total',
    'GraphQL operations answered, by operation name, type and outcome (error: the response carried errors)',
    ['operation', 'type', 'outcome'],
    this.registry,
  );
  private readonly graphqlDuration = new PlainHistogram(
    'agora_graphql_operation_duration_seconds',
    'Time Apollo spent on a GraphQL operation (parse to response), by operation name and type',
    ['operation', 'type'],
    LATENCY_BUCKETS,
    this.registry,
  );
  private readonly mcpToolCalls = new Counter({
    name: 'agora_mcp_tool_calls_total',
    help: 'MCP tool calls answered, by tool and outcome (ok; refused: the tool answered an error such as not found or forbidden; failed: an unexpected error)',
    labelNames: ['tool', 'outcome'],
    registers: [this.registry],
  });
  private readonly mcpToolDuration = new Histogram({
    name: 'agora_mcp_tool_call_duration_seconds',
    help: 'Time an MCP tool call took, by tool',
    labelNames: ['tool'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly tokensIssued = new Counter({
    name: 'agora_oauth_tokens_issued_total',
    help: 'Access tokens issued by the OAuth token endpoint, by grant type',
    labelNames: ['grant'],
    registers: [this.registry],
  });
  private readonly tokenRefusals = new Counter({
    name: 'agora_oauth_token_refusals_total',
    help: 'Requests the OAuth token endpoint refused, by OAuth error code (invalid_grant, invalid_client, …)',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  private readonly authRefusals = new Counter({
    name: 'agora_api_auth_refusals_total',
    help: 'API requests (GraphQL, REST, UserInfo) refused for their credentials: missing_credentials, invalid_token, insufficient_scope',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  private readonly passwordFailures = new Counter({
    name: 'agora_sign_in_failures_total',
    help: 'Wrong passwords (or unknown accounts), by form: sign_in, security (a password re-check)',
    labelNames: ['form'],
    registers: [this.registry],
  });
  private readonly throttles = new Counter({
    name: 'agora_throttled_total',
    help: 'Attempts refused with 429 by a throttle: sign_in, sign_up_accounts, sign_up_failures, device_code (wrong user codes at /oauth/device), second_step (wrong codes at /sign-in/second-factor), passkey (refused passkey answers), link_mail (password reset and verification mails)',
    labelNames: ['limit'],
    registers: [this.registry],
  });

  private readonly rateLimitRefusals = new Counter({
    name: 'agora_rate_limited_total',
    help: 'API requests refused with 429 by a rate limit, by budget: user (authenticated: every credential of a user), address (anonymous), client (OAuth token, revocation, introspection, device authorization), registration (OAuth dynamic client registration)',
    labelNames: ['budget'],
    registers: [this.registry],
  });

  private readonly jobsCompleted = new Counter({
    name: 'agora_jobs_completed_total',
    help: 'Jobs run to completion, by kind (a mail: its message, e.g. registration.confirmed)',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  private readonly jobsFailed = new Counter({
    name: 'agora_jobs_failed_total',
    help: 'Job attempts that failed, by kind: each is retried with backoff until its retries run out (then kept as failed: agora_jobs_dead)',
    labelNames: ['kind'],
    registers: [this.registry],
  });

  private readonly webhookDeliveries = new Counter({
    name: 'agora_webhook_deliveries_total',
    help: 'Webhook delivery attempts made, by outcome (succeeded: a 2xx answer; failed: anything else, a timeout, a refused target) and trigger (automatic, redelivery, test)',
    labelNames: ['outcome', 'trigger'],
    registers: [this.registry],
  });
  private readonly webhookDuration = new Histogram({
    name: 'agora_webhook_attempt_duration_seconds',
    help: 'Time a webhook delivery attempt took, from resolving the target to the end of the response read (bounded at 10 s)',
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly httpSeries = new Map<string, HttpRouteSeries>();
  private readonly graphqlSeries = new Map<string, GraphqlOperationSeries>();
  /** In a worker of WORKERS > 1: the whole process group's metrics, aggregated by the primary. */
  private readonly scrapeGroup: (() => Promise<string>) | undefined;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    owned: OwnedPool,
    private readonly clock: Clock,
  ) {
    this.enabled = metricsServed(config);
    const pool = (read: (p: NonNullable<OwnedPool['openPool']>) => number) =>
      function (this: Gauge) {
        const open = owned.openPool;
        if (open) this.set(read(open));
      };
    new Gauge({
      name: 'agora_db_pool_connections',
      help: 'Connections the database pool holds (in use and idle)',
      registers: [this.registry],
      collect: pool((p) => p.totalCount),
    });
    new Gauge({
      name: 'agora_db_pool_idle_connections',
      help: 'Connections of the database pool not in use',
      registers: [this.registry],
      collect: pool((p) => p.idleCount),
    });
    new Gauge({
      name: 'agora_db_pool_waiting_requests',
      help: 'Queries waiting for a connection of the database pool (it is at its maximum)',
      registers: [this.registry],
      collect: function (this: Gauge) {
        if (owned.openPool) this.set(owned.waitingCount);
      },
    });
    new Gauge({
      name: 'agora_db_pool_max_connections',
      help: 'Most connections the database pool may open (DATABASE_POOL_SIZE; 1 on the embedded database)',
      registers: [this.registry],
      collect: pool((p) => p.options.max ?? 10),
    });
    if (this.enabled) {
      const waits = new Histogram({
        name: 'agora_db_pool_wait_seconds',
        help: 'Time a query waited for a connection of the database pool (given up at DATABASE_POOL_WAIT_TIMEOUT_MS)',
        buckets: [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: [this.registry],
      });
      const shed = new Counter({
        name: 'agora_db_pool_shed_total',
        help: 'Queries refused (503 with Retry-After) because no connection of the database pool was free within DATABASE_POOL_WAIT_TIMEOUT_MS',
        registers: [this.registry],
      });
      owned.waits.onWait((waitedMs, wasShed) => {
        waits.observe(waitedMs / 1000);
        if (wasShed) shed.inc();
      });
    }
    // Process CPU, memory, file descriptors, GC, and event-loop lag (nodejs_eventloop_lag_seconds and its
    // percentiles): only when served, as the event-loop histogram samples all the time. In a cluster
    // worker they are labelled with the worker's id: they describe one process, and summing or averaging
    // them across workers (prom-client's defaults) would hide the one worker whose event loop is stuck.
    if (this.enabled) {
      collectDefaultMetrics({ register: this.registry, ...(cluster.isWorker && { labels: { worker: String(cluster.worker!.id) } }) });
    }
    this.scrapeGroup = this.enabled ? aggregatedScrape(this.registry) : undefined;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The text a scrape answers: this process's metrics, or with WORKERS > 1 the sum of every worker's. */
  scrape(): Promise<string> {
    return this.scrapeGroup ? this.scrapeGroup() : this.registry.metrics();
  }

  /** The series of one route (`route`: its pattern, `/api/events/:id`, or UNMATCHED_ROUTE, never a URL); keep it. */
  httpRoute(method: string, route: string): HttpRouteSeries {
    const key = `${method} ${route}`;
    let series = this.httpSeries.get(key);
    if (!series) this.httpSeries.set(key, (series = new HttpRouteSeries(this.httpRequests, this.httpDuration, method, route)));
    return series;
  }

  /** One HTTP response (HttpMetrics records through httpRoute, resolved once per route). */
  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpRoute(method, route).record(status, seconds);
  }

  /** The series of one GraphQL operation; `operation` must already be bounded (GraphqlMetricsPlugin). Keep it. */
  graphqlOperationSeries(operation: string, type: string): GraphqlOperationSeries {
    const key = `${operation}\u0000${type}`;
    let series = this.graphqlSeries.get(key);
    if (!series) {
      series = {
        ok: this.graphqlOperations.child(operation, type, 'ok'),
        error: this.graphqlOperations.child(operation, type, 'error'),
        duration: this.graphqlDuration.child(operation, type),
      };
      this.graphqlSeries.set(key, series);
    }
    return series;
  }

  /** One GraphQL operation; `operation` must already be bounded (GraphqlMetricsPlugin). */
  graphqlOperation(operation: string, type: string, errored: boolean, seconds: number): void {
    const series = this.graphqlOperationSeries(operation, type);
    (errored ? series.error : series.ok).value++;
    series.duration.observe(seconds);
  }

  /** One MCP tool call; `tool` is the name of a registered tool (a fixed set). */
  mcpToolCall(tool: string, outcome: 'ok' | 'refused' | 'failed', seconds: number): void {
    this.mcpToolCalls.labels(tool, outcome).inc();
    this.mcpToolDuration.labels(tool).observe(seconds);
  }

  tokenIssued(grant: string): void {
    this.tokensIssued.labels(grant).inc();
  }

  /** `reason`: an OAuth error code (a fixed set). */
  tokenRefused(reason: string): void {
    this.tokenRefusals.labels(reason).inc();
  }

  apiAuthRefused(reason: AuthRefusal): void {
    this.authRefusals.labels(reason).inc();
  }

  passwordRefused(form: PasswordForm): void {
    this.passwordFailures.labels(form).inc();
  }

  throttled(limit: ThrottleLimit): void {
    this.throttles.labels(limit).inc();
  }

  rateLimited(budget: 'user' | 'address' | 'client' | 'registration'): void {
    this.rateLimitRefusals.labels(budget).inc();
  }

  jobCompleted(kind: string): void {
    this.jobsCompleted.labels(kind).inc();
  }

  jobFailed(kind: string): void {
    this.jobsFailed.labels(kind).inc();
  }

  /**
   * `read`, shared by the gauges of one scrape: its answer is read again once older than a second by the
   * injected Clock (or when the Clock went back).
   */
  private readEverySecond<T>(read: () => Promise<T>): () => Promise<T> {
    let last: { at: number; value: Promise<T> } | undefined;
    return () => {
      const now = this.clock.now().getTime();
      if (!last || now - last.at > 1000 || now < last.at) last = { at: now, value: read() };
      return last.value;
    };
  }

  /**
   * The job queues' state, read from the database at each scrape (once for all four gauges). Every
   * process reads the same database, so with WORKERS > 1 the primary keeps one value (the largest), not their sum.
   */
  jobQueues(read: () => Promise<QueueGaugeState[]>): void {
    if (!this.enabled) return;
    const states = this.readEverySecond(read);
    const gauge = (name: string, help: string, value: (state: QueueGaugeState) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['queue'],
        aggregator: 'max',
        registers: [this.registry],
        async collect() {
          // A scrape while the database is down still answers, without these gauges' values.
          for (const state of await states().catch(() => [])) this.labels(state.queue).set(value(state));
        },
      });
    gauge('agora_jobs_waiting', 'Jobs due and not taken yet, by queue', (s) => s.waiting);
    gauge('agora_jobs_oldest_waiting_seconds', 'How long the oldest waiting job of the queue has been due', (s) => s.oldestWaitingSeconds);
    gauge('agora_jobs_scheduled', 'Jobs due later (a retry in its backoff, a job set for a time), by queue', (s) => s.scheduled);
    gauge('agora_jobs_active', 'Jobs being run now, by queue', (s) => s.active);
    gauge(
      'agora_jobs_dead',
      'Jobs whose retries ran out, kept as failed for an operator (npm run cli -- jobs:list --state failed)',
      (s) => s.failed,
    );
  }

  /** One webhook delivery attempt, as the delivery log records it. */
  webhookAttempt(outcome: 'succeeded' | 'failed', trigger: string, seconds: number): void {
    this.webhookDeliveries.labels(outcome, trigger).inc();
    this.webhookDuration.observe(seconds);
  }

  /**
   * The webhook endpoints by state and the deliveries already due, read from the database at each scrape
   * (like the job queues: every process reads the same rows, so with WORKERS > 1 the primary keeps the largest).
   */
  webhooks(read: () => Promise<WebhookGaugeState>): void {
    if (!this.enabled) return;
    // A scrape while the database is down still answers, without these gauges' values.
    const state = this.readEverySecond(() => read().catch(() => undefined));
    new Gauge({
      name: 'agora_webhook_endpoints',
      help: 'Webhook endpoints by state: active, paused, disabled (by the service, after failing for 72 hours)',
      labelNames: ['state'],
      aggregator: 'max',
      registers: [this.registry],
      async collect() {
        const read = await state();
        if (read) for (const [name, count] of Object.entries(read.endpoints)) this.labels(name).set(count);
      },
    });
    new Gauge({
      name: 'agora_webhooks_due',
      help: 'Webhook deliveries whose next attempt is due and not yet queued (the sweeper queues them every second: a growing value means it is stuck)',
      aggregator: 'max',
      registers: [this.registry],
      async collect() {
        const read = await state();
        if (read) this.set(read.due);
      },
    });
    new Gauge({
      name: 'agora_webhooks_stuck',
      help: 'Webhook deliveries queued for longer than their attempt job can live (its retries used up): the sweeper queues them again; a value that stays above 0 means attempts keep being lost',
      aggregator: 'max',
      registers: [this.registry],
      async collect() {
        const read = await state();
        if (read) this.set(read.stuck);
      },
    });
  }

  /** With REDIS_URL: whether the shared rate-limit counters can be reached (read at each scrape). */
  rateLimitStore(reachable: () => boolean): void {
    new Gauge({
      name: 'agora_rate_limit_store_up',
      help: 'With REDIS_URL: 1 when Redis, where every instance keeps the rate-limit counters, is reachable from every worker; 0 while any worker counts in memory',
      registers: [this.registry],
      // With WORKERS > 1 the primary merges the workers' values: the smallest, so 1 only when every worker is connected.
      aggregator: 'min',
      collect() {
        this.set(reachable() ? 1 : 0);
      },
    });
  }
}

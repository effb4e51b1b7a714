import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { GraphQLInstrumentation } from '@opentelemetry/instrumentation-graphql';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK, resources, tracing as sdkTracing } from '@opentelemetry/sdk-node';
import type { IncomingMessage } from 'node:http';
import type { AppConfig } from '../config/config.schema.js';
import { redactQuery } from '../logging/logger.js';

/** Probes and scrapes: frequent, alike, and of no interest in a trace. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export interface Tracing {
  /** Exports the spans still buffered, then stops; called last on shutdown. */
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry SDK: spans for incoming and outgoing HTTP, PostgreSQL queries (pg) and
 * GraphQL parsing, validation and execution (no per-field spans), exported over OTLP/HTTP. Must run
 * before Fastify, pg and graphql are loaded: their instrumentations patch them as they are required,
 * so main.ts starts tracing first and imports the application afterwards.
 */
export function startTracing(tracing: NonNullable<AppConfig['tracing']>): Tracing {
  const sdk = new NodeSDK({
    resource: resources.resourceFromAttributes({ 'service.name': tracing.serviceName }),
    spanProcessors: [new sdkTracing.BatchSpanProcessor(new OTLPTraceExporter({ url: `${tracing.endpoint}/v1/traces` }))],
    // Traces only: metrics are Prometheus's (/metrics) and logs go to stdout. Without these the SDK
    // would also export OTLP metrics and logs to the same endpoint.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.has((req.url ?? '').split('?', 1)[0]!),
        // The query as the logs show it (an allow-list): the instrumentation's own redaction only knows a
        // few cloud-storage signatures, and would export user_code, id_token_hint or code as sent.
        startIncomingSpanHook: (req: IncomingMessage) => {
          const mark = (req.url ?? '').indexOf('?');
          return mark < 0 ? {} : { 'url.query': redactQuery(req.url!.slice(mark + 1)) };
        },
      }),
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      new GraphQLInstrumentation({ ignoreResolveSpans: true, ignoreTrivialResolveSpans: true, mergeItems: true }),
    ],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}

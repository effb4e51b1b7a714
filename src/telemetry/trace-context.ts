import { trace } from '@opentelemetry/api';

/**
 * The trace and span of the code running now, as log fields (`trace_id`, `span_id`, the names
 * OpenTelemetry's log data model uses), so a request's log lines lead to its trace; empty outside a span.
 */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { createTestDatabase, TestDatabase } from './support/database.js';
import { startServer, waitForHttp } from './support/processes.js';
import { freePort } from './support/test-app.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** A stand-in OpenTelemetry collector: OTLP/HTTP with JSON bodies at /v1/traces. */
class TinyCollector {
  readonly spans: OtlpSpan[] = [];
  readonly paths: string[] = [];
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      this.paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const raw = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      if (req.url !== '/v1/traces') return void res.writeHead(404).end();
      const parsed = JSON.parse(body.toString('utf8')) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const resource of parsed.resourceSpans) for (const scope of resource.scopeSpans) this.spans.push(...scope.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const attribute = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value && Object.values(value)[0];
};

describe('tracing (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let db: TestDatabase;
  let collector: TinyCollector;
  beforeAll(async () => {
    db = await createTestDatabase();
    collector = new TinyCollector();
  });
  afterAll(async () => {
    await collector.close();
    await db.drop();
  });

  it('exports spans of a request (HTTP, GraphQL, PostgreSQL) in one trace, whose id the request log lines carry', async () => {
    const endpoint = await collector.start();
    const port = await freePort();
    const server = startServer({
      ...db.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, server);
      const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'trace-probe-1' },
        body: JSON.stringify({ query: 'query TraceProbe { events(first: 1) { totalCount } }' }),
      });
      expect(res.status).toBe(200);
      await res.text();
      // A secret in the query string: the span shows the query as the logs do.
      await fetch(`http://127.0.0.1:${port}/oauth/device?user_code=BCDF-GHJK&response_type=code`, { redirect: 'manual' });
    } finally {
      server.child.kill('SIGTERM');
    }
    // The buffered spans are exported on shutdown, before the process exits.
    expect(await server.exited).toBe(0);

    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const completed = lines.find((l) => l.reqId === 'trace-probe-1' && l.msg === 'request completed');
    expect(completed).toBeDefined();
    expect(completed!.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(completed!.span_id).toMatch(/^[0-9a-f]{16}$/);

    // Traces only: no OTLP metrics or logs.
    expect(collector.paths.length).toBeGreaterThan(0);
    expect(collector.paths.every((p) => p.startsWith('POST /v1/traces application/json'))).toBe(true);
    const trace = collector.spans.filter((s) => s.traceId === completed!.trace_id);
    const httpServer = trace.find((s) => s.kind === 2);
    expect(httpServer).toBeDefined();
    expect(httpServer!.spanId).toBe(completed!.span_id);
    expect(attribute(httpServer!, 'http.method') ?? attribute(httpServer!, 'http.request.method')).toBe('POST');
    expect(trace.some((s) => s.name.startsWith('graphql.'))).toBe(true);
    expect(trace.some((s) => attribute(s, 'db.system') === 'postgresql' || attribute(s, 'db.system.name') === 'postgresql')).toBe(true);
    const device = collector.spans.find((s) => attribute(s, 'url.path') === '/oauth/device');
    expect(attribute(device!, 'url.query')).toBe('user_code=[REDACTED]&response_type=code');
    expect(JSON.stringify(collector.spans)).not.toContain('BCDF-GHJK');
    // Health probes are not traced.
    expect(collector.spans.some((s) => String(attribute(s, 'http.target') ?? attribute(s, 'url.path')).includes('/healthz'))).toBe(false);
  });
});

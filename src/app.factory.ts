import fastifyCookie, { type CookieSerializeOptions, type ParseOptions } from '@fastify/cookie';
import { NestFactory } from '@nestjs/core';
import { acceptOneClickMultipart } from './notifications/one-click-form.js';
import { RequestLoad } from './jobs/request-load.js';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';
import { AppModule } from './app.module.js';
import { APP_CONFIG } from './config/config.module.js';
import { AppConfig } from './config/config.schema.js';
import { LegacyApiModule } from './legacy-api/legacy-api.module.js';
import { cookieText } from './errors/header-text.js';
import { TextBoundaryGuard } from './errors/text-boundary.guard.js';
import { LegacyOpenApi } from './legacy-api/openapi.js';
import { DatabaseTarget } from './database/database-target.js';
import { PinoNestLogger, requestId } from './logging/logger.js';
import { ClientCors } from './oauth/cors/client-cors.js';
import { HttpMetrics } from './metrics/http-metrics.js';
import { HttpDrain } from './shutdown/http-drain.js';
import { traceFields } from './telemetry/trace-context.js';
import { PageRenderer } from './web/page-renderer.js';
import { securityHeaders } from './web/security-headers.js';
import { parserRefusal, parserRefusalHandler, sendAndClose } from './web/parser-refusals.js';
import { OAUTH_CLIENT_ENDPOINTS, REGISTRATION_ENDPOINT } from './oauth/oauth-exception.filter.js';
import { MalformedRequestError } from './errors/generic-errors.js';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const BODY_LIMIT_BYTES = 1024 * 1024;

function trustHops(count: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < count;
}

export function createHttpAdapter(config: AppConfig, logger: Logger): FastifyAdapter {
  const headers = securityHeaders(config.secureCookies);
  return new FastifyAdapter({
    loggerInstance: logger,
    genReqId: requestId,
    // A number of proxies: the hops nearest the server are trusted (what Fastify does with a number).
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    bodyLimit: BODY_LIMIT_BYTES,
    // A body field named `__proto__` (JSON or form) is dropped like any field no endpoint reads (RFC 6749
    // §3.2 has the token endpoint ignore unrecognized parameters) rather than refused: Nest's form parser
    // refused it with a bare BadRequestException, which no endpoint answered in its own shape.
    onProtoPoisoning: 'remove',
    // What Node's HTTP parser refuses (an unknown method, a malformed request line or header, headers
    // over 16 KB: 400/431) never reaches a route: answered with the security headers, a request id and
    // the transport's body shape all the same (src/web/parser-refusals.ts).
    clientErrorHandler: parserRefusalHandler({
      headers,
      oauthPaths: OAUTH_ERROR_PATHS,
      log: (fields, message) => logger.info(fields, message),
    }),
    // Node would answer an HTTP/1.1 request without Host with a bare 400 of its own; the onRequest hook
    // of configureApp refuses it instead, in the house shape.
    http: { requireHostHeader: false },
    //
    // Fastify answers 503 to requests read once its close() has begun; the server calls app.close()
    // only after HttpDrain has seen the last connection go, so this does not answer a client of ours.
    return503OnClosing: true,
    // The router refuses a path that is not valid percent-encoding (400) or a path parameter over 100
    // characters (414) before any hook runs, and Fastify's default handler would answer in its own
    // shape: handed to the application's error handler instead, so the global FallbackExceptionFilter
    // answers them like every other client error.
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      void reply.headers(headers).header('x-request-id', request.id);
      request.server.errorHandler(error, request, reply);
    },
    // With tracing on, a request's logger is made inside its server span: every line it writes
    // ("incoming request", "request completed", errors) carries trace_id and span_id beside reqId.
    ...(config.tracing && {
      childLoggerFactory: (parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) =>
        parent.child({ ...bindings, ...traceFields() }, options),
    }),
  });
}

/** Plugins and request hooks shared by the server and the test harness; call before init(). */
export async function configureApp(app: NestFastifyApplication): Promise<void> {
  const config = app.get<AppConfig>(APP_CONFIG);
  await app.register(fastifyCookie, COOKIE_PLUGIN_OPTIONS);
  const fastify = app.getHttpAdapter().getInstance();
  const headers = securityHeaders(config.secureCookies);
  addResponseHeaders(fastify, headers);
  answerOutsideFastify(fastify.server, headers, fastify.log);
  app.get(ClientCors).attach(fastify);
  app.get(HttpDrain).attach(fastify);
  app.get(HttpMetrics).attach(fastify);
  app.get(PageRenderer).attach(fastify);
  acceptOneClickMultipart(fastify);
  app.get(RequestLoad).attach(fastify);
  fastify.decorateRequest('principal', null);
  fastify.decorate('protectedResourceBase', config.baseUrl);
  app.get(LegacyOpenApi).attach(app, LegacyApiModule, { baseUrl: config.baseUrl, sunset: config.legacyApi.sunset });
  // Global guards run in the order they were added; the modules' (AuthGuard, PageGuard) were added when
  // the application was created, so the text boundary runs after them.
  app.useGlobalGuards(new TextBoundaryGuard());
}

// Cookie values are decoded through the header text boundary (src/errors/header-text.ts). The plugin
// hands parseOptions to the parser (its typings say serialize options, which it also merges them into).
const COOKIE_PARSE_OPTIONS: ParseOptions = { decode: cookieText };
/** @fastify/cookie's options (exported for bench/layers.ts, which installs the same request hooks one by one). */
export const COOKIE_PLUGIN_OPTIONS = { parseOptions: COOKIE_PARSE_OPTIONS as CookieSerializeOptions };

/**
 * Every response's security headers and request id, and the refusal of an HTTP/1.1 request without Host
 * (exported for bench/layers.ts).
 */
export function addResponseHeaders(fastify: FastifyInstance, headers: Record<string, string>): void {
  fastify.addHook('onRequest', (req, reply, done) => {
    void reply.headers(headers).header('x-request-id', req.id);
    if (req.raw.httpVersion === '1.1' && req.headers.host === undefined)
      return done(new MalformedRequestError('An HTTP/1.1 request must have a Host header'));
    done();
  });
}

/** Where the parser's refusals are answered in RFC 6749 JSON: the endpoints OAuth clients call. */
const OAUTH_ERROR_PATHS: ReadonlySet<string> = new Set([...OAUTH_CLIENT_ENDPOINTS, REGISTRATION_ENDPOINT]);

/**
 * The two requests Node answers itself unless someone listens: an `Expect` other than 100-continue
 * (a bare 417) and `CONNECT` (the connection dropped without an answer). An expectation this server
 * has no words for is ignored (RFC 9110 §10.1.1 allows it) and the request goes to the routes; CONNECT
 * is refused as the parser's refusals are.
 */
function answerOutsideFastify(server: Server, headers: Record<string, string>, log: FastifyBaseLogger): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => server.emit('request', req, res));
  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    const refusal = parserRefusal({ code: 'CONNECT' }, { headers, oauthPaths: OAUTH_ERROR_PATHS });
    log.info({ reqId: refusal.requestId, res: { statusCode: refusal.status }, code: 'CONNECT' }, 'Request refused by the HTTP parser');
    sendAndClose(socket, refusal.response);
  });
}

/** Builds the Nest application on Fastify. The caller owns the database target and calls listen(). */
export async function createApp(config: AppConfig, target: DatabaseTarget, logger: Logger): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, target), createHttpAdapter(config, logger), {
    logger: new PinoNestLogger(logger.child({ component: 'nest' })),
    abortOnError: false,
  });
  await configureApp(app);
  await app.init();
  return app;
}

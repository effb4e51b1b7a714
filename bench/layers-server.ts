// A server for bench/layers.ts: `{ viewer { id name } }` answered from a constant, with the first
// <count> of Agora's per-request layers (LAYERS below) switched on, each installed by the code the
// application itself runs (src/app.factory.ts configureApp and the classes it calls).
//   layers-server.js <port> <count>
// Configuration comes from the environment, as the application reads it (rate limits, metrics, log level).
import 'reflect-metadata';
import { ApolloServer } from '@apollo/server';
import type { ApolloServerPlugin } from '@apollo/server';
import fastifyCookie from '@fastify/cookie';
import Fastify, { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLID, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString } from 'graphql';
import { addResponseHeaders, COOKIE_PLUGIN_OPTIONS, createHttpAdapter } from '../src/app.factory.js';
import { CredentialCache } from '../src/auth/credential-cache.js';
import { CredentialVerifier } from '../src/auth/credential-verifier.js';
import type { Principal } from '../src/auth/principal.js';
import { RequestAuthenticator } from '../src/auth/request-authenticator.js';
import { hashSecret } from '../src/auth/secret-token.js';
import { type Clock, SystemClock } from '../src/clock/clock.js';
import { AppConfig, loadConfig } from '../src/config/config.schema.js';
import type { OwnedPool } from '../src/database/owned-pool.js';
import { CompiledExecution } from '../src/graphql/compiled-execution.js';
import type { GraphqlContext } from '../src/graphql/graphql-context.js';
import { errorLoggingPlugin } from '../src/graphql/graphql-errors.js';
import { GraphqlMetricsPlugin } from '../src/graphql/graphql-metrics.plugin.js';
import { answerGraphql } from '../src/graphql/graphql.controller.js';
import { apolloSettings } from '../src/graphql/graphql.module.js';
import { OperationPolicyPlugin } from '../src/graphql/operation-policy.plugin.js';
import type { PublicFieldsRegistry } from '../src/graphql/public-fields.registry.js';
import { RequestLoad } from '../src/jobs/request-load.js';
import { LegacyApiHooks } from '../src/legacy-api/legacy-api.hooks.js';
import type { LegacyApiUsageService } from '../src/legacy-api/legacy-api-usage.service.js';
import { createLogger } from '../src/logging/logger.js';
import { HttpMetrics } from '../src/metrics/http-metrics.js';
import { Metrics } from '../src/metrics/metrics.js';
import { ClientCors } from '../src/oauth/cors/client-cors.js';
import { RateLimits } from '../src/rate-limits/rate-limits.service.js';
import { HttpDrain } from '../src/shutdown/http-drain.js';
import { securityHeaders } from '../src/web/security-headers.js';
import { LAYERS, LAYERS_TOKEN } from './layers-list.js';

const CONSTANT_VIEWER = { id: '00000000-0000-0000-0000-000000000001', name: 'Ada Lovelace' };
const VIEWER_ANSWER = JSON.stringify({ data: { viewer: CONSTANT_VIEWER } });
const PRINCIPAL: Principal = {
  user: {
    id: '00000000-0000-0000-0000-000000000001',
    username: 'ada',
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    emailVerified: true,
  },
  scopes: new Set(['read_api']),
  credential: { kind: 'personal_access_token', id: '00000000-0000-0000-0000-000000000002' },
};

const [portArg, countArg] = process.argv.slice(2);
const count = Number(countArg ?? LAYERS.length);
const on = (layer: (typeof LAYERS)[number]) => LAYERS.indexOf(layer) < count;

const config: AppConfig = loadConfig({ ...process.env });
const logger = createLogger(config);
const ownedPool = { openPool: undefined, waitingCount: 0, waits: { onWait: () => undefined } } as unknown as OwnedPool;
const metrics = new Metrics(config, ownedPool, new SystemClock());
const rateLimits = new RateLimits(config, metrics, new SystemClock());

const fastify: FastifyInstance = on(LAYERS[1])
  ? (createHttpAdapter(config, logger).getInstance() as unknown as FastifyInstance)
  : Fastify();
if (on(LAYERS[2])) addResponseHeaders(fastify, securityHeaders(config.secureCookies));
if (on(LAYERS[3])) await fastify.register(fastifyCookie, COOKIE_PLUGIN_OPTIONS);
if (on(LAYERS[4])) new ClientCors(undefined as never, undefined as never).attach(fastify);
if (on(LAYERS[5])) new HttpDrain().attach(fastify);
if (on(LAYERS[6])) new RequestLoad().attach(fastify);
if (on(LAYERS[7])) {
  const adapterHost = { httpAdapter: { getInstance: () => fastify } };
  new LegacyApiHooks(adapterHost as never, { record: () => undefined } as unknown as LegacyApiUsageService, config).onModuleInit();
}
if (on(LAYERS[8])) new HttpMetrics(metrics).attach(fastify);
fastify.decorateRequest('principal', null);

let answer = (_req: FastifyRequest, reply: FastifyReply): Promise<void> | FastifyReply =>
  reply.header('content-type', 'application/json; charset=utf-8').send(VIEWER_ANSWER);
if (on(LAYERS[9])) {
  const user = new GraphQLObjectType({
    name: 'User',
    fields: { id: { type: new GraphQLNonNull(GraphQLID) }, name: { type: new GraphQLNonNull(GraphQLString) } },
  });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: {
        viewer: {
          type: new GraphQLNonNull(user),
          resolve: (_: unknown, __: unknown, { principal }: GraphqlContext) =>
            principal?.user ? { id: principal.user.id, name: principal.user.name } : CONSTANT_VIEWER,
        },
      },
    }),
  });
  const plugins: ApolloServerPlugin<GraphqlContext>[] = [];
  if (on(LAYERS[11])) {
    const publicFields = { isPublic: () => false } as unknown as PublicFieldsRegistry;
    plugins.push(new OperationPolicyPlugin(publicFields, config, metrics), errorLoggingPlugin);
  }
  if (on(LAYERS[13]) && metrics.enabled) plugins.push(new GraphqlMetricsPlugin(metrics));
  const { path: _path, graphiql: _graphiql, ...settings } = apolloSettings(plugins) as Record<string, unknown>;
  const apollo = new ApolloServer<GraphqlContext>({ ...(settings as object), gateway: new CompiledExecution(schema) });
  await apollo.start();
  const limits = on(LAYERS[12]) ? rateLimits : ({ enabled: false } as RateLimits);
  answer = (req, reply) => answerGraphql(apollo, limits, req, reply);
}
if (on(LAYERS[10])) {
  const cache = new CredentialCache(60_000);
  const clock = { now: () => new Date() } as Clock;
  const verifier = new CredentialVerifier(cache, clock, undefined as never);
  cache.set(hashSecret(LAYERS_TOKEN), PRINCIPAL, Date.now(), cache.generation);
  const authenticator = new RequestAuthenticator(verifier);
  fastify.addHook('preHandler', (req, _reply, done) => {
    req.principal = authenticator.authenticate(req, { session: true }) as Principal | null;
    done();
  });
}
fastify.post('/graphql', (req, reply) => answer(req, reply));
fastify.get('/healthz', (_req, reply) => reply.send('ok'));

await fastify.listen({ port: Number(portArg), host: '127.0.0.1' });

import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloDriverConfig } from '@nestjs/apollo';
import { Module, OnModuleInit } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { GraphQLModule as NestGraphQLModule } from '@nestjs/graphql';
import { AgoraApolloDriver, ApolloServerHost } from './agora-apollo.driver.js';
import { DateTimeScalar } from './date-time.scalar.js';
import { errorLoggingPlugin, formatGraphqlError } from './graphql-errors.js';
import { GraphqlController } from './graphql.controller.js';
import { OperationPolicyPlugin } from './operation-policy.plugin.js';
import { GraphqlMetricsPlugin } from './graphql-metrics.plugin.js';
import { Metrics } from '../metrics/metrics.js';
import { PublicFieldsRegistry } from './public-fields.registry.js';
import { RateLimitsResolver } from './rate-limits.resolver.js';
import { join } from 'node:path';
import { projectRoot } from '../config/project-root.js';
import { storableStringLiterals } from './storable-string-literals.js';
import { knownOperationTypes } from './known-operation-types.js';
import { GRAPHQL_PATH } from './graphql-path.js';
import { ErrorMappers } from '../errors/error-mappers.js';
import { ErrorsModule } from '../errors/errors.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { RateLimitsModule } from '../rate-limits/rate-limits.module.js';
import { addressOf } from '../errors/generic-errors.js';
import { graphqlErrors } from './graphql-exception.filter.js';
import type { GraphqlContext } from './graphql-context.js';

/**
 * Apollo Server's settings besides the schema, with Agora's own plugins (exported for bench/layers.ts,
 * which adds the plugins one by one).
 */
export function apolloSettings(agoraPlugins: ApolloServerPlugin<GraphqlContext>[]): ApolloDriverConfig {
  return {
    path: GRAPHQL_PATH,
    introspection: true,
    graphiql: false,
    persistedQueries: false,
    // Apollo's CSRF guard exists for cookie-authenticated endpoints. /graphql reads credentials from
    // headers only, which a cross-site page cannot make a browser send, so GET queries are allowed
    // as GraphQL-over-HTTP describes them.
    csrfPrevention: false,
    allowBatchedHttpRequests: false,
    includeStacktraceInErrorResponses: false,
    autoTransformHttpErrors: false,
    formatError: formatGraphqlError,
    // Execution errors answer 200 as GraphQL-over-HTTP says, except an unreachable database, which
    // errorLoggingPlugin answers 503: Nest's plugin that would reset every status to 200 stays out.
    preserveHttpStatusForExecutionErrors: false,
    // The text boundary inside documents: string literals PostgreSQL cannot store (variables are
    // checked with the request body by TextBoundaryGuard). Operations of a type the schema lacks
    // (subscriptions) are refused here too, not in execution.
    validationRules: [storableStringLiterals, knownOperationTypes],
    // No @cacheControl hints are used: skip the per-field hook that would compute them. Agora is not
    // a federated subgraph: no inline traces, whose plugin Apollo would otherwise ask on every request.
    plugins: [
      ...agoraPlugins,
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
    ],
  };
}

@Module({
  imports: [DiscoveryModule, MetricsModule],
  providers: [PublicFieldsRegistry, OperationPolicyPlugin, GraphqlMetricsPlugin, ApolloServerHost],
  exports: [PublicFieldsRegistry, OperationPolicyPlugin, GraphqlMetricsPlugin, ApolloServerHost],
})
class GraphqlPolicyModule {}

/** The GraphQL API: schema-first from the feature files (src/<feature>/*.graphql), served by GraphqlController at /graphql. */
@Module({
  imports: [
    NestGraphQLModule.forRootAsync<ApolloDriverConfig>({
      driver: AgoraApolloDriver,
      imports: [GraphqlPolicyModule, MetricsModule],
      inject: [OperationPolicyPlugin, GraphqlMetricsPlugin, Metrics],
      useFactory: (policy: OperationPolicyPlugin, graphqlMetrics: GraphqlMetricsPlugin, metrics: Metrics): ApolloDriverConfig => ({
        typePaths: [join(projectRoot(), 'src/**/*.graphql')],
        resolvers: { DateTime: DateTimeScalar },
        // GraphqlMetricsPlugin only when /metrics is served: otherwise Apollo need not call it on every request.
        ...apolloSettings([policy, errorLoggingPlugin, ...(metrics.enabled ? [graphqlMetrics] : [])]),
      }),
    }),
    GraphqlPolicyModule,
    ErrorsModule,
    MetricsModule,
    RateLimitsModule,
  ],
  providers: [RateLimitsResolver],
  controllers: [GraphqlController],
})
export class GraphqlModule implements OnModuleInit {
  constructor(private readonly errorMappers: ErrorMappers) {}

  /** What Fastify refuses at /graphql before GraphqlController runs, or for a method it lacks. */
  onModuleInit(): void {
    this.errorMappers.register((error, request, reply) => {
      if (addressOf(request) !== GRAPHQL_PATH) return false;
      graphqlErrors.answer(error, request, reply);
      return true;
    });
  }
}

import { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { Inject, Injectable } from '@nestjs/common';
import { GraphQLError } from 'graphql';
import { AuthError } from '../auth/auth.errors.js';
import { hasAnyScope } from '../auth/principal.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { GraphqlContext } from './graphql-context.js';
import { fragmentsOf, isMetaField, operationCost, operationDepth, rootFieldNames } from './operation-analysis.js';
import { PublicFieldsRegistry } from './public-fields.registry.js';

const QUERY_SCOPES = ['api', 'read_api'];
const MUTATION_SCOPES = ['api'];

/**
 * Decides, after parsing and validation and before any resolver runs, whether the operation may run:
 * anonymous callers only for operations made of @Public() root fields, tokens only with the scope the
 * operation type needs, and every caller within the depth and cost limits.
 */
@Injectable()
export class OperationPolicyPlugin implements ApolloServerPlugin<GraphqlContext> {
  constructor(
    private readonly publicFields: PublicFieldsRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async requestDidStart(): Promise<GraphQLRequestListener<GraphqlContext>> {
    return {
      didResolveOperation: async ({ operation, document, contextValue, schema, request, operationName }) => {
        if (!operation) return; // Apollo itself answers a request whose operation cannot be chosen.
        const fragments = fragmentsOf(document);
        const rootType = operation.operation === 'query' ? 'Query' : operation.operation === 'mutation' ? 'Mutation' : 'Subscription';
        const dataFields = [...rootFieldNames(operation, fragments)].filter((name) => !isMetaField(name));
        const { principal } = contextValue;

        let denial: AuthError | undefined;
        if (!principal) {
          if (dataFields.some((field) => !this.publicFields.isPublic(rootType, field))) denial = AuthError.missingCredentials();
        } else if (dataFields.length > 0) {
          const needed = rootType === 'Query' ? QUERY_SCOPES : MUTATION_SCOPES;
          if (!hasAnyScope(principal, needed)) denial = AuthError.insufficientScope(needed);
        }
        if (denial) {
          contextValue.policy.denial = denial;
          throw new GraphQLError(denial.message, { extensions: { code: denial.code, http: { status: denial.status } } });
        }

        const limits = principal ? this.config.graphql.limits.authenticated : this.config.graphql.limits.anonymous;
        const depth = operationDepth(operation, fragments);
        if (depth > limits.maxDepth) {
          throw new GraphQLError(`Query is nested ${depth} levels deep; the limit is ${limits.maxDepth}.`, {
            extensions: { code: 'QUERY_TOO_DEEP', depth, maxDepth: limits.maxDepth, http: { status: 400 } },
          });
        }
        const cost = operationCost(schema, document, operationName ?? undefined, request.variables);
        if (cost > limits.maxCost) {
          throw new GraphQLError(
            `Query would cost ${cost} points; the limit is ${limits.maxCost}. Ask for fewer items per page or fewer fields.`,
            {
              extensions: { code: 'QUERY_TOO_COMPLEX', cost, maxCost: limits.maxCost, http: { status: 400 } },
            },
          );
        }
      },
    };
  }
}

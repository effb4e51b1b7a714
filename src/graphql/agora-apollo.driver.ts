import { ApolloServer } from '@apollo/server';
import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { Injectable } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { CompiledExecution } from './compiled-execution.js';
import type { GraphqlContext } from './graphql-context.js';

/** The Apollo server the driver started, for GraphqlController: Nest's GraphQLModule does not export its driver. */
@Injectable()
export class ApolloServerHost {
  server?: ApolloServer<GraphqlContext>;
}
import { requireRootResolvers } from './root-resolvers.js';

/**
 * Nest's Apollo driver without its own HTTP route: GraphqlController serves `/graphql` instead, so
 * requests pass through Nest's global guard and exception filters like every other route. Apollo
 * executes operations through CompiledExecution, given the schema Nest built, once every root field
 * of that schema has a resolver.
 */
@Injectable()
export class AgoraApolloDriver extends ApolloDriver {
  constructor(
    modulesContainer: ModulesContainer,
    private readonly host: ApolloServerHost,
  ) {
    super(modulesContainer);
  }

  protected override async registerFastify(options: ApolloDriverConfig): Promise<void> {
    const { schema, typeDefs: _typeDefs, resolvers: _resolvers, ...rest } = options;
    if (!schema) throw new Error('AgoraApolloDriver: Nest built no schema');
    requireRootResolvers(schema);
    const server = new ApolloServer({ ...(rest as object), gateway: new CompiledExecution(schema) });
    await server.start();
    this.apolloServer = server;
    this.host.server = server as unknown as ApolloServer<GraphqlContext>;
  }
}

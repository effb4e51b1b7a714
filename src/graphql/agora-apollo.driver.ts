import { ApolloServer } from '@apollo/server';
import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { Injectable } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { CompiledExecution } from './compiled-execution.js';

/**
 * Nest's Apollo driver without its own HTTP route: GraphqlController serves `/graphql` instead, so
 * requests pass through Nest's global guard and exception filters like every other route. Apollo
 * executes operations through CompiledExecution, given the schema Nest built.
 */
@Injectable()
export class AgoraApolloDriver extends ApolloDriver {
  constructor(modulesContainer: ModulesContainer) {
    super(modulesContainer);
  }

  protected override async registerFastify(options: ApolloDriverConfig): Promise<void> {
    const { schema, typeDefs: _typeDefs, resolvers: _resolvers, ...rest } = options;
    if (!schema) throw new Error('AgoraApolloDriver: Nest built no schema');
    const server = new ApolloServer({ ...(rest as object), gateway: new CompiledExecution(schema) });
    await server.start();
    this.apolloServer = server;
  }
}

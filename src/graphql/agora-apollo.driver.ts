import { ApolloServer } from '@apollo/server';
import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { Injectable } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';

/**
 * Nest's Apollo driver without its own HTTP route: GraphqlController serves `/graphql` instead, so
 * requests pass through Nest's global guard and exception filters like every other route.
 */
@Injectable()
export class AgoraApolloDriver extends ApolloDriver {
  constructor(modulesContainer: ModulesContainer) {
    super(modulesContainer);
  }

  protected override async registerFastify(options: ApolloDriverConfig): Promise<void> {
    const server = new ApolloServer(options as ConstructorParameters<typeof ApolloServer>[0]);
    await server.start();
    this.apolloServer = server;
  }
}

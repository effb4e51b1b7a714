import { ApolloServer, HeaderMap, HTTPGraphQLRequest } from '@apollo/server';
import { Controller, Get, Post, Req, Res } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { GraphQLModule } from '@nestjs/graphql';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { Public } from '../auth/public.decorator.js';
import { AgoraApolloDriver } from './agora-apollo.driver.js';
import { GraphqlContext } from './graphql-context.js';

/**
 * `/graphql`. Anonymous requests are let through here (@Public): which operations they may run is
 * decided per operation by OperationPolicyPlugin, whose refusals are answered over HTTP with the
 * contract's 401/403 bodies instead of a GraphQL error envelope.
 */
@Controller('graphql')
@Public()
export class GraphqlController {
  private server?: ApolloServer<GraphqlContext>;

  constructor(private readonly moduleRef: ModuleRef) {}

  @Post()
  post(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.execute(req, reply);
  }

  @Get()
  async get(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // A browser opening the endpoint (no query, wants HTML) is shown the explorer.
    if (!req.url.includes('?') && (req.headers.accept ?? '').startsWith('text/html')) {
      await reply.redirect('/explorer', 302);
      return;
    }
    return this.execute(req, reply);
  }

  private async execute(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const context: GraphqlContext = { req, principal: req.principal ?? null, policy: {}, scope: new Map() };
    const response = await this.apollo().executeHTTPGraphQLRequest({
      httpGraphQLRequest: toApolloRequest(req),
      context: async () => context,
    });
    if (context.policy.denial) throw context.policy.denial;

    reply.status(response.status ?? 200);
    for (const [name, value] of response.headers) reply.header(name, value);
    if (response.body.kind === 'complete') {
      await reply.send(response.body.string);
    } else {
      await reply.send(Readable.from(response.body.asyncIterator));
    }
  }

  private apollo(): ApolloServer<GraphqlContext> {
    this.server ??= (this.moduleRef.get(GraphQLModule, { strict: false }).graphQlAdapter as AgoraApolloDriver)
      .instance as unknown as ApolloServer<GraphqlContext>;
    return this.server;
  }
}

function toApolloRequest(req: FastifyRequest): HTTPGraphQLRequest {
  const headers = new HeaderMap();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const queryStart = req.url.indexOf('?');
  return {
    method: req.method.toUpperCase(),
    headers,
    search: queryStart === -1 ? '' : req.url.slice(queryStart),
    body: req.body,
  };
}

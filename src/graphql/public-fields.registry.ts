import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { IS_PUBLIC } from '../auth/public.decorator.js';

// Metadata keys written by @Query()/@Mutation() in @nestjs/graphql.
const RESOLVER_TYPE_METADATA = 'graphql:resolver_type';
const RESOLVER_NAME_METADATA = 'graphql:resolver_name';

/** Which root fields (`Query.user`, …) carry @Public(), read from the resolvers at start-up. */
@Injectable()
export class PublicFieldsRegistry implements OnModuleInit {
  private readonly publicFields = new Set<string>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
      const classIsPublic = this.reflector.get<boolean>(IS_PUBLIC, instance.constructor) ?? false;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const method = prototype[methodName] as (...args: unknown[]) => unknown;
        const type: unknown = Reflect.getMetadata(RESOLVER_TYPE_METADATA, method);
        if (type !== 'Query' && type !== 'Mutation' && type !== 'Subscription') continue;
        const field = (Reflect.getMetadata(RESOLVER_NAME_METADATA, method) as string | undefined) ?? methodName;
        if (classIsPublic || this.reflector.get<boolean>(IS_PUBLIC, method)) this.publicFields.add(`${type}.${field}`);
      }
    }
  }

  isPublic(rootType: string, field: string): boolean {
    return this.publicFields.has(`${rootType}.${field}`);
  }
}

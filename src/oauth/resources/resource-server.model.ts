/** `jwt`: RFC 9068 JWT access tokens the resource server verifies against the JWKS. `opaque`: tokens it introspects. */
export const RESOURCE_SERVER_TOKEN_FORMATS = ['jwt', 'opaque'] as const;
export type ResourceServerTokenFormat = (typeof RESOURCE_SERVER_TOKEN_FORMATS)[number];

/** A resource server as the dashboard, the CLI and the consent page see it: never its secret's hash. */
export interface ResourceServer {
  id: string;
  ownerId: string;
  name: string;
  identifier: string;
  accessTokenFormat: ResourceServerTokenFormat;
  /** The client_id it introspects with. */
  introspectionId: string;
  createdAt: Date;
}

/** The API shape of a row (ResourceServerEntity), its secret's hash left behind. */
export function toResourceServer(entity: ResourceServer): ResourceServer {
  return {
    id: entity.id,
    ownerId: entity.ownerId,
    name: entity.name,
    identifier: entity.identifier,
    accessTokenFormat: entity.accessTokenFormat,
    introspectionId: entity.introspectionId,
    createdAt: entity.createdAt,
  };
}

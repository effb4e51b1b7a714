import { INestApplication } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { z } from 'zod';
import './legacy-representations.js';
import './legacy-requests.js';

/** `{ $ref }` to a schema of the legacy API (a zod schema with `.meta({ id })`). */
export const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
export const listOf = (id: string) => ({ type: 'array' as const, items: ref(id) });

/**
 * The OpenAPI 3 document of the legacy REST API, generated from its controllers' decorators by
 * @nestjs/swagger, with the request and response schemas converted from the zod schemas the
 * controllers validate and answer with. Built once, on first request.
 */
@Injectable()
export class LegacyOpenApi {
  private build?: () => OpenAPIObject;
  private document?: OpenAPIObject;

  attach(app: INestApplication, module: unknown, info: { baseUrl: string; sunset: Date }): void {
    this.build = () => {
      const config = new DocumentBuilder()
        .setTitle('Agora legacy REST API')
        .setDescription(
          `Deprecated: every endpoint has a GraphQL equivalent (POST /graphql), listed in the migration guide. ` +
            `This API stops answering on ${info.sunset.toISOString().slice(0, 10)}. Authentication: ` +
            '`Private-Token: <personal access token>` or `Authorization: Bearer <token>`; `read_api` tokens may only GET.',
        )
        .setVersion('1')
        .addServer(info.baseUrl)
        .addApiKey({ type: 'apiKey', in: 'header', name: 'Private-Token' }, 'PrivateToken')
        .addBearerAuth({ type: 'http', scheme: 'bearer' }, 'Bearer')
        .build();
      const document = SwaggerModule.createDocument(app, config, { include: [module as never] });
      const { schemas } = z.toJSONSchema(z.globalRegistry, {
        target: 'openapi-3.0',
        io: 'input',
        unrepresentable: 'any',
        uri: (id) => `#/components/schemas/${id}`,
      }) as {
        schemas: Record<string, { $id?: string } & Record<string, unknown>>;
      };
      // `$id` is JSON Schema, not an OpenAPI 3.0 Schema Object keyword.
      const components = Object.fromEntries(Object.entries(schemas).map(([id, { $id: _id, ...schema }]) => [id, schema]));
      document.components = { ...document.components, schemas: { ...document.components?.schemas, ...components } };
      return document;
    };
  }

  get(): OpenAPIObject {
    if (!this.build) throw new Error('LegacyOpenApi is not attached to the application');
    this.document ??= this.build();
    return this.document;
  }
}

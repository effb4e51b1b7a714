import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { In, Repository } from 'typeorm';
import { generateSecret, hashSecret, SecretPrefix } from '../../auth/secret-token.js';
import { Clock } from '../../clock/clock.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { violatedUniqueConstraint } from '../../database/postgres-errors.js';
import { isUuid } from '../../database/uuid.js';
import { ResourceServerEntity } from './resource-server.entity.js';
import { ResourceServer, toResourceServer } from './resource-server.model.js';
import { INTROSPECTION_ID_PREFIX } from '../clients/client-authentication.js';
import { type ResourceServerInput, validateResourceServerInput } from './resource-server-validation.js';
import { ResourceServerError } from './resource-servers.errors.js';

/** A resource server just registered, or its secret just regenerated: the secret is shown this once. */
export interface ResourceServerWithSecret {
  resourceServer: ResourceServer;
  introspectionSecret: string;
}

/** The all-zero hash compared when there is no resource server, so that every comparison takes the same time. */
const NO_HASH = Buffer.alloc(32);

/**
 * Resource servers other than Agora's API (RFC 8707): registered by a user (the dashboard, checked for a
 * verified e-mail there) or an operator (the CLI), each with an identifier no other has and an
 * introspection credential whose secret is generated here, stored as SHA-256 and shown once.
 */
@Injectable()
export class ResourceServersService {
  constructor(
    @InjectRepository(ResourceServerEntity) private readonly servers: Repository<ResourceServerEntity>,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(ownerId: string, input: ResourceServerInput): Promise<ResourceServerWithSecret> {
    const valid = validateResourceServerInput(input, this.config.baseUrl);
    if (await this.servers.existsBy({ identifier: valid.identifier })) throw taken();
    const introspectionSecret = generateSecret(SecretPrefix.oauthResourceServerSecret);
    try {
      const entity = await this.servers.save(
        this.servers.create({
          ownerId,
          ...valid,
          introspectionId: `${INTROSPECTION_ID_PREFIX}${randomBytes(16).toString('hex')}`,
          introspectionSecretHash: hashSecret(introspectionSecret),
          createdAt: this.clock.now(),
        }),
      );
      return { resourceServer: toResourceServer(entity), introspectionSecret };
    } catch (err) {
      // Registered by someone else between the check and the insert.
      if (violatedUniqueConstraint(err) === 'oauth_resource_servers_identifier_key') throw taken();
      throw err;
    }
  }

  /** A new introspection secret; the old one stops working at once. */
  async regenerateSecret(id: string, ownerId?: string): Promise<ResourceServerWithSecret> {
    const entity = await this.findEntity(id, ownerId);
    const introspectionSecret = generateSecret(SecretPrefix.oauthResourceServerSecret);
    await this.servers.update({ id: entity.id }, { introspectionSecretHash: hashSecret(introspectionSecret) });
    return { resourceServer: toResourceServer(entity), introspectionSecret };
  }

  listForOwner(ownerId: string): Promise<ResourceServer[]> {
    return this.list({ ownerId });
  }

  /** Every resource server (the operator's list). */
  listAll(): Promise<ResourceServer[]> {
    return this.list({});
  }

  async get(id: string, ownerId?: string): Promise<ResourceServer> {
    return toResourceServer(await this.findEntity(id, ownerId));
  }

  /** Deletes it: its identifier is no longer a resource one can ask for, and its credential introspects nothing. */
  async delete(id: string, ownerId?: string): Promise<ResourceServer> {
    const entity = await this.findEntity(id, ownerId);
    await this.servers.delete({ id: entity.id });
    return toResourceServer(entity);
  }

  /** Those of these ids that still exist (a deleted resource server's id matches nothing). */
  async findByIds(ids: readonly string[]): Promise<ResourceServer[]> {
    if (ids.length === 0) return [];
    return (await this.servers.findBy({ id: In([...ids]) })).map(toResourceServer);
  }

  /** The registered resource servers with these identifiers (those that are not registered are left out). */
  async findByIdentifiers(identifiers: readonly string[]): Promise<ResourceServer[]> {
    if (identifiers.length === 0) return [];
    return (await this.servers.findBy({ identifier: In([...identifiers]) })).map(toResourceServer);
  }

  /**
   * The resource server whose introspection credential this is, or null. The hash is compared in
   * constant time, also when no resource server has this id.
   */
  async authenticate(introspectionId: string, secret: string): Promise<ResourceServer | null> {
    const found = introspectionId.startsWith(INTROSPECTION_ID_PREFIX) ? await this.servers.findOneBy({ introspectionId }) : null;
    const expected = found ? Buffer.from(found.introspectionSecretHash, 'hex') : NO_HASH;
    const matches = timingSafeEqual(expected, Buffer.from(hashSecret(secret), 'hex'));
    return matches && found ? toResourceServer(found) : null;
  }

  private async list(where: { ownerId?: string }): Promise<ResourceServer[]> {
    return (await this.servers.find({ where, order: { createdAt: 'ASC', name: 'ASC' } })).map(toResourceServer);
  }

  private async findEntity(id: string, ownerId?: string): Promise<ResourceServerEntity> {
    const entity = isUuid(id) ? await this.servers.findOneBy(ownerId ? { id, ownerId } : { id }) : null;
    if (!entity) throw new ResourceServerError('RESOURCE_SERVER_NOT_FOUND', `No resource server with id "${id}"`, 'id');
    return entity;
  }
}

function taken(): ResourceServerError {
  return new ResourceServerError('IDENTIFIER_TAKEN', 'A resource server with this identifier is already registered', 'identifier');
}

import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { DomainError } from '../../errors/domain-error.js';
import { OAuthError } from '../oauth.errors.js';
import type { ApplicationEntity } from './application.entity.js';
import { toApplication } from './application.model.js';
import { ApplicationsService } from './applications.service.js';
import { readClientMetadata } from './client-metadata.js';
import { ClientInformation, clientInformation, registrationError } from './client-registration.service.js';

const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;
const MAX_TOKEN_LENGTH = 512;

/**
 * Dynamic client registration management (RFC 7592): a client registered dynamically reads (GET),
 * replaces (PUT) and deletes (DELETE) its own registration at its `registration_client_uri`, with the
 * registration access token it got when it registered. A missing, unknown or another client's token is
 * the same 401 `invalid_token` whether or not the client exists (§2: nothing learnt about other clients).
 */
@Injectable()
export class RegistrationManagement {
  constructor(
    private readonly applications: ApplicationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The application this request may manage: the one in the address, if the token is its own. */
  async authorize(clientId: string, authorization: string | undefined): Promise<ApplicationEntity> {
    const token = authorization && authorization.length <= MAX_TOKEN_LENGTH ? BEARER.exec(authorization)?.[1] : undefined;
    if (!token)
      throw new OAuthError('invalid_token', 'Send the registration access token: Authorization: Bearer <registration_access_token>');
    const application = await this.applications.findByRegistrationToken(clientId, token);
    if (!application) throw new OAuthError('invalid_token', 'The registration access token is not valid for this client');
    return application;
  }

  /** §2.1: the client's current registration (without its secret or token, which are kept hashed). */
  read(application: ApplicationEntity): ClientInformation {
    return clientInformation(this.config.baseUrl, toApplication(application));
  }

  /**
   * §2.2: the registration replaced by what the body says, checked as at registration (a field left out
   * gets its default, as when registering). `client_id` must be the client's; a `client_secret`, if sent,
   * must be one of its secrets. The client type and the kind of authentication (secret or keys) stay.
   */
  async update(application: ApplicationEntity, body: unknown): Promise<ClientInformation> {
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      const fields = body as Record<string, unknown>;
      if (fields.client_id !== application.clientId)
        throw new OAuthError('invalid_request', 'client_id is required in the body and must be this client’s');
      if (fields.client_secret !== undefined) {
        const matches =
          typeof fields.client_secret === 'string' && (await this.applications.authenticate(application.clientId, fields.client_secret));
        if (!matches) throw new OAuthError('invalid_request', 'client_secret, when sent, must be the client’s current secret');
      }
      // registration_access_token, registration_client_uri, client_id_issued_at and client_secret_expires_at
      // are the server's (§2.2): a client that sends back what it read has them ignored, like any other
      // member Agora does not keep.
    }
    const metadata = readClientMetadata(body);
    if (metadata.clientType !== application.clientType) {
      throw new OAuthError(
        'invalid_client_metadata',
        `token_endpoint_auth_method: this client is ${application.clientType}; that cannot change (register a new client)`,
      );
    }
    try {
      const updated = await this.applications.updateEntity(application, metadata.input);
      return clientInformation(this.config.baseUrl, updated, { grantTypes: metadata.grantTypes, responseTypes: metadata.responseTypes });
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'invalid') throw registrationError(err);
      throw err;
    }
  }

  /** §2.3: the client deleted, with its tokens, codes and grants; its token no longer works. */
  async delete(application: ApplicationEntity): Promise<void> {
    await this.applications.delete(application.id);
  }
}

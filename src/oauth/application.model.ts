import { ApplicationEntity, ClientType } from './application.entity.js';

export { CLIENT_TYPES, type ClientType } from './application.entity.js';

/** A registered OAuth application as its owner sees it: never the secret or its hash. */
export interface Application {
  id: string;
  /** Null until a user claims an application registered dynamically. */
  ownerId: string | null;
  name: string;
  clientId: string;
  clientType: ClientType;
  redirectUris: string[];
  scopes: string[];
  postLogoutRedirectUris: string[];
  createdAt: Date;
  secretRotatedAt: Date | null;
}

export function toApplication(entity: ApplicationEntity): Application {
  return {
    id: entity.id,
    ownerId: entity.ownerId,
    name: entity.name,
    clientId: entity.clientId,
    clientType: entity.clientType,
    redirectUris: entity.redirectUris,
    scopes: entity.scopes,
    postLogoutRedirectUris: entity.postLogoutRedirectUris,
    createdAt: entity.createdAt,
    secretRotatedAt: entity.secretRotatedAt,
  };
}

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

/**
 * An application that registered itself (dynamic registration, RFC 7591) and no user has claimed: nobody
 * at Agora answers for its name or its redirect URIs, which whoever registered it chose. Agora never
 * sends a browser to such an application on its own: only after the user has seen where it goes.
 */
export function isSelfRegistered(application: { ownerId: string | null }): boolean {
  return application.ownerId === null;
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

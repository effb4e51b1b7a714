import { ApplicationEntity } from './application.entity.js';

/** A registered OAuth application as its owner sees it: never the secret or its hash. */
export interface Application {
  id: string;
  ownerId: string;
  name: string;
  clientId: string;
  redirectUris: string[];
  scopes: string[];
  createdAt: Date;
  secretRotatedAt: Date | null;
}

export function toApplication(entity: ApplicationEntity): Application {
  return {
    id: entity.id,
    ownerId: entity.ownerId,
    name: entity.name,
    clientId: entity.clientId,
    redirectUris: entity.redirectUris,
    scopes: entity.scopes,
    createdAt: entity.createdAt,
    secretRotatedAt: entity.secretRotatedAt,
  };
}

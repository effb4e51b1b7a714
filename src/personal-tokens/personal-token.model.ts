import { PersonalTokenEntity } from './personal-token.entity.js';

/** A personal access token as users and operators see it: never the secret, never its hash. */
export interface PersonalToken {
  id: string;
  userId: string;
  name: string;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

export function toPersonalToken(entity: PersonalTokenEntity): PersonalToken {
  return {
    id: entity.id,
    userId: entity.userId,
    name: entity.name,
    scopes: entity.scopes,
    createdAt: entity.createdAt,
    lastUsedAt: entity.lastUsedAt,
    expiresAt: entity.expiresAt,
    revokedAt: entity.revokedAt,
  };
}

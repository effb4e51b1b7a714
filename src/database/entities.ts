import { AccessTokenEntity } from '../oauth/access-token.entity.js';
import { ApplicationEntity } from '../oauth/application.entity.js';
import { AuthorizationCodeEntity } from '../oauth/authorization-code.entity.js';
import { GrantEntity } from '../oauth/grant.entity.js';
import { SigningKeyEntity } from '../oauth/signing-key.entity.js';
import { PersonalTokenEntity } from '../personal-tokens/personal-token.entity.js';
import { SessionEntity } from '../sessions/session.entity.js';
import { SignInFailureEntity } from '../sessions/sign-in-failure.entity.js';
import { UserEntity } from '../users/user.entity.js';

/** Every TypeORM entity of the service. A new module adds its entities here. */
export const ENTITIES = [
  UserEntity,
  PersonalTokenEntity,
  SessionEntity,
  SignInFailureEntity,
  ApplicationEntity,
  AccessTokenEntity,
  AuthorizationCodeEntity,
  GrantEntity,
  SigningKeyEntity,
];

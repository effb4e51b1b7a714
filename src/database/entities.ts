import { PersonalTokenEntity } from '../personal-tokens/personal-token.entity.js';
import { UserEntity } from '../users/user.entity.js';

/** Every TypeORM entity of the service. A new module adds its entities here. */
export const ENTITIES = [UserEntity, PersonalTokenEntity];

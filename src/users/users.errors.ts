import { DomainError, DomainErrorKind } from '../errors/domain-error.js';

export type UserErrorCode =
  | 'INVALID_USERNAME'
  | 'INVALID_EMAIL'
  | 'INVALID_NAME'
  | 'WEAK_PASSWORD'
  | 'WRONG_PASSWORD'
  | 'USERNAME_TAKEN'
  | 'EMAIL_TAKEN'
  | 'USER_NOT_FOUND'
  | 'EMAIL_NOT_VERIFIED'
  | 'SAME_EMAIL';

const KIND: Record<UserErrorCode, DomainErrorKind> = {
  INVALID_USERNAME: 'invalid',
  INVALID_EMAIL: 'invalid',
  INVALID_NAME: 'invalid',
  WEAK_PASSWORD: 'invalid',
  WRONG_PASSWORD: 'invalid',
  USERNAME_TAKEN: 'conflict',
  EMAIL_TAKEN: 'conflict',
  USER_NOT_FOUND: 'not_found',
  EMAIL_NOT_VERIFIED: 'forbidden',
  SAME_EMAIL: 'invalid',
};

export class UserError extends DomainError {
  constructor(code: UserErrorCode, message: string, field?: string) {
    super(KIND[code], code, message, field);
  }
}

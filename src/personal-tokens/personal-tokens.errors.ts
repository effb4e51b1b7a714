import { DomainError, DomainErrorKind } from '../errors/domain-error.js';

export type PersonalTokenErrorCode = 'INVALID_NAME' | 'INVALID_SCOPES' | 'INVALID_EXPIRY' | 'TOO_MANY_TOKENS' | 'TOKEN_NOT_FOUND';

const KIND: Record<PersonalTokenErrorCode, DomainErrorKind> = {
  INVALID_NAME: 'invalid',
  INVALID_SCOPES: 'invalid',
  INVALID_EXPIRY: 'invalid',
  TOO_MANY_TOKENS: 'invalid',
  TOKEN_NOT_FOUND: 'not_found',
};

export class PersonalTokenError extends DomainError {
  constructor(code: PersonalTokenErrorCode, message: string, field?: string) {
    super(KIND[code], code, message, field);
  }
}

import { DomainError, DomainErrorKind } from '../errors/domain-error.js';

export type ApplicationErrorCode =
  | 'INVALID_NAME'
  | 'INVALID_REDIRECT_URI'
  | 'INVALID_SCOPES'
  | 'APPLICATION_NOT_FOUND'
  | 'PUBLIC_CLIENT'
  | 'INVALID_CLIENT_TYPE'
  | 'ALREADY_CLAIMED';

const KIND: Record<ApplicationErrorCode, DomainErrorKind> = {
  INVALID_NAME: 'invalid',
  INVALID_REDIRECT_URI: 'invalid',
  INVALID_SCOPES: 'invalid',
  APPLICATION_NOT_FOUND: 'not_found',
  PUBLIC_CLIENT: 'invalid',
  INVALID_CLIENT_TYPE: 'invalid',
  ALREADY_CLAIMED: 'conflict',
};

export class ApplicationError extends DomainError {
  constructor(code: ApplicationErrorCode, message: string, field?: string) {
    super(KIND[code], code, message, field);
  }
}

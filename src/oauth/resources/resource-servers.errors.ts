import { DomainError, DomainErrorKind } from '../../errors/domain-error.js';

export type ResourceServerErrorCode =
  'INVALID_NAME' | 'INVALID_IDENTIFIER' | 'IDENTIFIER_TAKEN' | 'INVALID_ACCESS_TOKEN_FORMAT' | 'RESOURCE_SERVER_NOT_FOUND';

const KIND: Record<ResourceServerErrorCode, DomainErrorKind> = {
  INVALID_NAME: 'invalid',
  INVALID_IDENTIFIER: 'invalid',
  IDENTIFIER_TAKEN: 'invalid',
  INVALID_ACCESS_TOKEN_FORMAT: 'invalid',
  RESOURCE_SERVER_NOT_FOUND: 'not_found',
};

export class ResourceServerError extends DomainError {
  constructor(code: ResourceServerErrorCode, message: string, field?: string) {
    super(KIND[code], code, message, field);
  }
}

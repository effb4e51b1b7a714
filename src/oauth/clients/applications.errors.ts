import { DomainError, DomainErrorKind } from '../../errors/domain-error.js';

export type ApplicationErrorCode =
  | 'INVALID_NAME'
  | 'INVALID_REDIRECT_URI'
  | 'INVALID_CLIENT_URI'
  | 'INVALID_LOGO_URI'
  | 'INVALID_DESCRIPTION'
  | 'INVALID_SCOPES'
  | 'APPLICATION_NOT_FOUND'
  | 'PUBLIC_CLIENT'
  | 'INVALID_CLIENT_TYPE'
  | 'ALREADY_CLAIMED'
  | 'INVALID_SIGNING_ALG'
  | 'INVALID_ACCESS_TOKEN_FORMAT'
  | 'INVALID_AUTH_METHOD'
  | 'INVALID_KEYS'
  | 'NO_SECRET'
  | 'TWO_SECRETS'
  | 'ONE_SECRET'
  | 'INVALID_SUBJECT_TYPE'
  | 'SUBJECTS_IN_USE';

const KIND: Record<ApplicationErrorCode, DomainErrorKind> = {
  INVALID_NAME: 'invalid',
  INVALID_REDIRECT_URI: 'invalid',
  INVALID_CLIENT_URI: 'invalid',
  INVALID_LOGO_URI: 'invalid',
  INVALID_DESCRIPTION: 'invalid',
  INVALID_SCOPES: 'invalid',
  APPLICATION_NOT_FOUND: 'not_found',
  PUBLIC_CLIENT: 'invalid',
  INVALID_CLIENT_TYPE: 'invalid',
  ALREADY_CLAIMED: 'conflict',
  INVALID_SIGNING_ALG: 'invalid',
  INVALID_ACCESS_TOKEN_FORMAT: 'invalid',
  INVALID_AUTH_METHOD: 'invalid',
  INVALID_KEYS: 'invalid',
  NO_SECRET: 'invalid',
  TWO_SECRETS: 'conflict',
  ONE_SECRET: 'conflict',
  INVALID_SUBJECT_TYPE: 'invalid',
  SUBJECTS_IN_USE: 'invalid',
};

export class ApplicationError extends DomainError {
  constructor(
    code: ApplicationErrorCode,
    message: string,
    field?: string,
    /** Which item of a list field is wrong (0 for the first): each edge names it its own way ("Line 3", `redirect_uris[2]`). */
    readonly index?: number,
  ) {
    super(KIND[code], code, message, field);
  }
}

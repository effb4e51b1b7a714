import { DomainError, DomainErrorKind } from '../errors/domain-error.js';

export type SessionErrorCode = 'SESSION_NOT_FOUND';

const KIND: Record<SessionErrorCode, DomainErrorKind> = {
  SESSION_NOT_FOUND: 'not_found',
};

export class SessionError extends DomainError {
  constructor(code: SessionErrorCode, message: string, field?: string) {
    super(KIND[code], code, message, field);
  }
}

import { DomainError, DomainErrorKind } from '../errors/domain-error.js';

export type TwoFactorErrorCode = 'WRONG_CODE' | 'CODE_REUSED' | 'NOT_ENROLLING' | 'ALREADY_ENABLED' | 'NOT_ENABLED';

const KIND: Record<TwoFactorErrorCode, DomainErrorKind> = {
  WRONG_CODE: 'invalid',
  CODE_REUSED: 'invalid',
  NOT_ENROLLING: 'conflict',
  ALREADY_ENABLED: 'conflict',
  NOT_ENABLED: 'conflict',
};

export class TwoFactorError extends DomainError {
  constructor(code: TwoFactorErrorCode, message: string, field?: string) {
    super(KIND[code], code, message, field);
  }
}

/** What the second step and the enrolment say about a code. */
export const CODE_MESSAGES = {
  wrong: 'That code is not right. Check the time on your phone and try again.',
  replayed: 'This code was already used. Wait for the next one.',
  malformed: 'Enter the 6-digit code from your authenticator app.',
  recoveryWrong: 'That recovery code is not right, or it was already used.',
  recoveryMalformed: 'Enter one of your recovery codes, like abcde-23456.',
} as const;

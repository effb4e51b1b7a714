import { DomainError, DomainErrorKind } from '../errors/domain-error.js';

export type PasskeyErrorCode =
  /** The challenge the response signed is unknown, used, expired, or was issued for something else. */
  | 'CHALLENGE_NOT_VALID'
  /** The response is not one the browser would send, or its signature, origin or RP ID is wrong. */
  | 'NOT_VERIFIED'
  /** Signing in with a passkey alone needs the authenticator to verify its user (PIN, biometric). */
  | 'USER_NOT_VERIFIED'
  /** No passkey of this user (or of anyone, for a sign-in alone) has this credential id. */
  | 'UNKNOWN_PASSKEY'
  | 'ALREADY_REGISTERED'
  | 'TOO_MANY_PASSKEYS'
  | 'INVALID_NAME'
  | 'PASSKEY_NOT_FOUND';

const KIND: Record<PasskeyErrorCode, DomainErrorKind> = {
  CHALLENGE_NOT_VALID: 'invalid',
  NOT_VERIFIED: 'invalid',
  USER_NOT_VERIFIED: 'invalid',
  UNKNOWN_PASSKEY: 'invalid',
  ALREADY_REGISTERED: 'conflict',
  TOO_MANY_PASSKEYS: 'conflict',
  INVALID_NAME: 'invalid',
  PASSKEY_NOT_FOUND: 'not_found',
};

export class PasskeyError extends DomainError {
  constructor(code: PasskeyErrorCode, message: string, field?: string) {
    super(KIND[code], code, message, field);
  }
}

import { Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';

/** RFC 7636 §4.1: 43 to 128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~". */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** BASE64URL(SHA256(verifier)) without padding is always 43 characters. */
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** Proof Key for Code Exchange, S256 only. */
@Injectable()
export class PkceService {
  isValidChallenge(challenge: unknown): challenge is string {
    return typeof challenge === 'string' && CHALLENGE.test(challenge);
  }

  isValidVerifier(verifier: unknown): verifier is string {
    return typeof verifier === 'string' && VERIFIER.test(verifier);
  }

  challengeOf(verifier: string): string {
    return createHash('sha256').update(verifier, 'ascii').digest('base64url');
  }

  /** True when the verifier is well-formed and hashes to the challenge (compared in constant time). */
  verify(verifier: unknown, challenge: string): boolean {
    if (!this.isValidVerifier(verifier)) return false;
    const expected = Buffer.from(challenge, 'ascii');
    const actual = Buffer.from(this.challengeOf(verifier), 'ascii');
    return expected.length === actual.length && timingSafeEqual(expected, actual);
  }
}

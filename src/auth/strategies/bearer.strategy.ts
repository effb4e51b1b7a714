import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { CredentialVerifier } from '../credential-verifier.js';
import { Principal } from '../principal.js';

/** `Authorization: Bearer <token>`: an OAuth access token, or a personal access token. */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly verifier: CredentialVerifier) {
    super();
  }

  validate(token: string): Promise<Principal | null> {
    return this.verifier.verifyAny(token);
  }
}

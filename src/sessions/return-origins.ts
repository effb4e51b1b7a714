import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AuthorizationRequestValidator } from '../oauth/authorization-request.js';

/**
 * Origins the sign-in and sign-up forms may end at through their redirects: the client of an OAuth
 * authorization request they return to (a returning user whose approval covers the request goes
 * straight back to the client, and Chromium applies the page's form-action to that redirect). The
 * validator is looked up when needed because the OAuth module imports this one.
 */
@Injectable()
export class ReturnOrigins {
  constructor(private readonly moduleRef: ModuleRef) {}

  async of(returnTo: string): Promise<string[]> {
    const validator = this.moduleRef.get(AuthorizationRequestValidator, { strict: false });
    const origin = await validator.clientOriginOf(returnTo);
    return origin ? [origin] : [];
  }
}

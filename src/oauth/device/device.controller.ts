import { Body, Controller, Get, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { SignedInUser } from '../../web/page-sessions.js';
import type { PageResult } from '../../web/page-result.js';
import { Pages, SignedIn } from '../../web/pages.decorator.js';
import { DeviceVerification } from './device-verification.js';

/**
 * `/oauth/device`, the verification URI of the device flow (RFC 8628 §3.3; DeviceVerification has the
 * steps): a signed-in user enters the code their device shows, and approves or denies it.
 */
@Controller('oauth/device')
@Pages()
export class DeviceController {
  constructor(private readonly verification: DeviceVerification) {}

  @Get()
  show(@SignedIn() signedIn: SignedInUser, @Query('user_code') typed?: unknown): PageResult {
    return this.verification.show(signedIn, typed);
  }

  /** The code the user submitted (no `decision`: shows the consent screen), or their decision on it. */
  @Post()
  decide(@Req() req: FastifyRequest, @SignedIn() signedIn: SignedInUser, @Body() body: Record<string, unknown>): Promise<PageResult> {
    return this.verification.decide(req, signedIn, body);
  }
}

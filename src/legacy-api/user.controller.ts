import { personOf } from '../auth/principal.js';
import { Controller, Get, Req } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { RateLimited } from '../rate-limits/rate-limited.decorator.js';
import { LegacyRead } from './legacy-decorators.js';
import { ref } from './openapi.js';

@ApiTags('user')
@RateLimited()
@Controller('api/user')
export class LegacyUserController {
  @Get()
  @LegacyRead('The authenticated user', '{ viewer { id username name } }', { signedIn: true })
  @ApiOkResponse({ schema: ref('User') })
  user(@Req() request: FastifyRequest) {
    const { id, username, name } = personOf(request.principal!);
    return { id, username, name };
  }
}

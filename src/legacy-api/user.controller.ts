import { Controller, Get, Req, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { RequireScopes } from '../auth/public.decorator.js';
import { LegacyExceptionFilter } from './legacy-exception.filter.js';
import { ref } from './openapi.js';
import { RateLimited } from '../rate-limits/rate-limited.decorator.js';

@ApiTags('user')
@RateLimited()
@Controller('api/user')
export class LegacyUserController {
  @Get()
  @RequireScopes('api', 'read_api')
  @UseFilters(LegacyExceptionFilter)
  @ApiOperation({
    summary: 'The authenticated user',
    description: 'Deprecated. GraphQL: `{ viewer { id username name } }`',
    deprecated: true,
  })
  @ApiSecurity('PrivateToken')
  @ApiSecurity('Bearer')
  @ApiOkResponse({ schema: ref('User') })
  user(@Req() request: FastifyRequest) {
    const { id, username, name } = request.principal!.user;
    return { id, username, name };
  }
}

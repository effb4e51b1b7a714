import { Controller, Get, Header, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Public } from '../auth/public.decorator.js';
import { projectRoot } from '../config/project-root.js';
import { LegacyExceptionFilter } from './legacy-exception.filter.js';
import { LegacyOpenApi } from './openapi.js';
import { RateLimited } from '../rate-limits/rate-limited.decorator.js';

/** The legacy API's description and the way out of it. */
@ApiExcludeController()
@RateLimited()
@Controller('api')
@Public()
@UseFilters(LegacyExceptionFilter)
export class LegacyMetaController {
  private guide?: string;

  constructor(private readonly openApi: LegacyOpenApi) {}

  @Get('openapi.json')
  openapi() {
    return this.openApi.get();
  }

  @Get('migration-guide')
  @Header('content-type', 'text/markdown; charset=utf-8')
  async migrationGuide(): Promise<string> {
    this.guide ??= await readFile(join(projectRoot(), 'docs/legacy-to-graphql.md'), 'utf8');
    return this.guide;
  }
}

import { Controller, Get, NotFoundException, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OwnAuthentication, Public } from '../auth/public.decorator.js';
import { projectRoot } from '../config/project-root.js';

const TYPES: Record<string, string> = { css: 'text/css; charset=utf-8', svg: 'image/svg+xml', js: 'text/javascript; charset=utf-8' };
const ALLOWED = /^[a-z0-9-]+\.(css|svg|js)$/;

/** The pages' own static files (no CDN: the pages work offline). */
@Controller('assets')
@Public()
@OwnAuthentication()
export class AssetsController {
  private readonly cache = new Map<string, Buffer>();

  @Get(':file')
  asset(@Param('file') file: string, @Res() reply: FastifyReply): FastifyReply {
    if (!ALLOWED.test(file)) throw new NotFoundException();
    let content = this.cache.get(file);
    if (!content) {
      try {
        content = readFileSync(join(projectRoot(), 'assets', file));
      } catch {
        throw new NotFoundException();
      }
      this.cache.set(file, content);
    }
    return reply
      .header('content-type', TYPES[file.split('.').pop()!]!)
      .header('cache-control', 'public, max-age=3600')
      .header('x-content-type-options', 'nosniff')
      .send(content);
  }
}

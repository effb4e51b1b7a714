import { Controller, Get, NotFoundException, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OwnAuthentication, Public } from '../auth/public.decorator.js';
import { projectRoot } from '../config/project-root.js';
import { vendorAsset } from './vendor-assets.js';

const TYPES: Record<string, string> = { css: 'text/css; charset=utf-8', svg: 'image/svg+xml', js: 'text/javascript; charset=utf-8' };
const ALLOWED = /^[a-z0-9-]+\.(css|svg|js)$/;

/** The pages' own static files, and the allow-listed third-party ones (no CDN: the pages work offline). */
@Controller('assets')
@Public()
@OwnAuthentication()
export class AssetsController {
  private readonly cache = new Map<string, Buffer>();

  @Get(':file')
  asset(@Param('file') file: string, @Res() reply: FastifyReply): FastifyReply {
    if (!ALLOWED.test(file)) throw new NotFoundException();
    const content = this.read(file, () => join(projectRoot(), 'assets', file));
    return send(reply, content, TYPES[file.split('.').pop()!]!, 'public, max-age=3600');
  }

  /** Exact files of exact package versions (the version is in the name): cached for a year. */
  @Get('vendor/:file')
  vendor(@Param('file') file: string, @Res() reply: FastifyReply): FastifyReply {
    const asset = vendorAsset(file);
    if (!asset) throw new NotFoundException();
    const content = this.read(`vendor/${asset.name}`, () => asset.path);
    return send(reply, content, asset.contentType, 'public, max-age=31536000, immutable');
  }

  private read(key: string, path: () => string): Buffer {
    let content = this.cache.get(key);
    if (!content) {
      try {
        content = readFileSync(path());
      } catch {
        throw new NotFoundException();
      }
      this.cache.set(key, content);
    }
    return content;
  }
}

function send(reply: FastifyReply, content: Buffer, contentType: string, cacheControl: string): FastifyReply {
  return reply
    .header('content-type', contentType)
    .header('cache-control', cacheControl)
    .header('x-content-type-options', 'nosniff')
    .send(content);
}

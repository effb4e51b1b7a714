import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ResourceIndicators } from './resource-indicators.js';
import { ResourceServerEntity } from './resource-server.entity.js';
import { ResourceServersService } from './resource-servers.service.js';

/** Resource servers other than Agora's API (RFC 8707): their registrations and the `resource` values that name them. */
@Module({
  imports: [TypeOrmModule.forFeature([ResourceServerEntity])],
  providers: [ResourceServersService, ResourceIndicators],
  exports: [ResourceServersService, ResourceIndicators],
})
export class ResourceServersModule {}

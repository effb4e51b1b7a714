import { Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';
import { MigrationReadiness } from './migration-readiness.js';
import { PoolLiveness } from './pool-liveness.js';

@Module({ controllers: [HealthController], providers: [PoolLiveness, MigrationReadiness] })
export class HealthModule {}

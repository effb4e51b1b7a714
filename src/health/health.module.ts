import { Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';
import { PoolLiveness } from './pool-liveness.js';

@Module({ controllers: [HealthController], providers: [PoolLiveness] })
export class HealthModule {}

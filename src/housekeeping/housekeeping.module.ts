import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OAuthModule } from '../oauth/oauth.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { HousekeepingRunEntity } from './housekeeping-run.entity.js';
import { HousekeepingService } from './housekeeping.service.js';

/** Periodic clean-up of expired rows; part of the server, not of the CLI. */
@Module({ imports: [TypeOrmModule.forFeature([HousekeepingRunEntity]), SessionsModule, OAuthModule], providers: [HousekeepingService] })
export class HousekeepingModule {}

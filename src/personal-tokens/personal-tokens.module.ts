import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PersonalTokenEntity } from './personal-token.entity.js';
import { PersonalTokensService } from './personal-tokens.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([PersonalTokenEntity])],
  providers: [PersonalTokensService],
  exports: [PersonalTokensService],
})
export class PersonalTokensModule {}

import { Module } from '@nestjs/common';
import { ErrorMappers } from './error-mappers.js';

/** The registry features contribute their error mappers to (FallbackExceptionFilter reads it). */
@Module({
  providers: [ErrorMappers],
  exports: [ErrorMappers],
})
export class ErrorsModule {}

import { Module } from '@nestjs/common';
import { HttpDrain } from './http-drain.js';

/** The server's shutdown: the HTTP drain, which readiness reports and main.ts runs on SIGTERM/SIGINT. */
@Module({ providers: [HttpDrain], exports: [HttpDrain] })
export class ShutdownModule {}

import { Global, Module } from '@nestjs/common';

/** The time source for every decision that depends on the time (src/clock/README.md), so tests can move time instead of waiting. */
export abstract class Clock {
  abstract now(): Date;
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}

@Global()
@Module({
  providers: [{ provide: Clock, useClass: SystemClock }],
  exports: [Clock],
})
export class ClockModule {}

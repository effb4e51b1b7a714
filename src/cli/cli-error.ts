import { constants } from 'node:os';

/** A problem with how the CLI was called: printed as is, exit status 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The database is not at this code's schema and the command was not asked to migrate: printed as is, exit status 1. */
export class NotMigratedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotMigratedError';
  }
}

/**
 * SIGINT or SIGTERM stopped the command, which undid what it had begun (`outcome` says so): printed
 * as is, exit status 128 + the signal's number, as a shell reports a process the signal ended.
 */
export class InterruptedError extends Error {
  readonly exitCode: number;

  constructor(signal: 'SIGINT' | 'SIGTERM', outcome: string) {
    super(`Interrupted by ${signal}: ${outcome}`);
    this.name = 'InterruptedError';
    this.exitCode = 128 + constants.signals[signal];
  }
}

/** The command could not do what it was asked (a job that does not exist): printed as is, exit status 1. */
export class CommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandError';
  }
}

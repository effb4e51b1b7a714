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

import { QueryFailedError } from 'typeorm';

/** The constraint a failed statement violated as a unique violation (SQLSTATE 23505), if it did. */
export function violatedUniqueConstraint(err: unknown): string | undefined {
  if (!(err instanceof QueryFailedError)) return undefined;
  const { code, constraint } = err.driverError as { code?: string; constraint?: string };
  return code === '23505' ? constraint : undefined;
}

/**
 * What went wrong, independent of transport. Each edge maps the kind to its own vocabulary:
 * HTTP status codes in the REST filter, `extensions.code` and `userErrors` in GraphQL. `rate_limited`: an
 * action of its own throttled (sending a test webhook), not the request budget; 429, `RATE_LIMITED`.
 */
export type DomainErrorKind = 'invalid' | 'not_found' | 'conflict' | 'forbidden' | 'rate_limited';

/** Base of every module's typed error. `code` is a stable machine-readable string such as `USERNAME_TAKEN`. */
export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Several invalid fields of one input, reported together: every edge lists each of them. */
export class InvalidInput extends DomainError {
  constructor(readonly errors: readonly DomainError[]) {
    super('invalid', 'INVALID_INPUT', errors.map((e) => e.message).join(' '));
  }
}

/** The failures a DomainError stands for: the several of an InvalidInput, or the error itself. */
export function failuresOf(error: DomainError): readonly DomainError[] {
  return error instanceof InvalidInput ? error.errors : [error];
}

type Checked<R extends Record<string, () => unknown>> = { [K in keyof R]: ReturnType<R[K]> };

/**
 * Runs every check of one input and reports all the invalid fields at once, rather than the first one
 * only, so a form shows each of its errors after one round trip. Returns each check's value under its
 * key; throws the one invalid-input error, or an InvalidInput with all of them. Other errors propagate.
 */
export function checkAll<R extends Record<string, () => unknown>>(checks: R): Checked<R> {
  const values: Partial<Checked<R>> = {};
  const failures: DomainError[] = [];
  for (const key of Object.keys(checks) as (keyof R & string)[]) {
    try {
      values[key] = checks[key]!() as ReturnType<R[typeof key]>;
    } catch (err) {
      if (!(err instanceof DomainError) || err.kind !== 'invalid') throw err;
      failures.push(...failuresOf(err));
    }
  }
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new InvalidInput(failures);
  return values as Checked<R>;
}

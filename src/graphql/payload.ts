import { DomainError, failuresOf } from '../errors/domain-error.js';
import type * as G from '../generated/graphql.js';

type Payload<K extends string, T> = { [P in K]: T | null } & { userErrors: G.UserError[] };

/**
 * A mutation's payload: the result under `key`, or `userErrors` for what the user can fix (invalid
 * input, a conflicting state), one per invalid field, each field a path under `input` (`a.b` becomes
 * `["input", "a", "b"]`). Not-found, permission and unexpected failures stay request errors.
 */
export async function toPayload<K extends string, T>(key: K, run: () => Promise<T>): Promise<Payload<K, T>> {
  try {
    return { [key]: await run(), userErrors: [] } as Payload<K, T>;
  } catch (err) {
    if (!(err instanceof DomainError) || (err.kind !== 'invalid' && err.kind !== 'conflict')) throw err;
    return {
      [key]: null,
      userErrors: failuresOf(err).map((e) => ({
        field: e.field ? ['input', ...e.field.split('.')] : null,
        message: e.message,
        code: e.code,
      })),
    } as Payload<K, T>;
  }
}

/**
 * What went wrong, independent of transport. Each edge maps the kind to its own vocabulary:
 * HTTP status codes in the REST filter, `extensions.code` and `userErrors` in GraphQL.
 */
export type DomainErrorKind = 'invalid' | 'not_found' | 'conflict' | 'forbidden';

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

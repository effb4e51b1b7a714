import { DomainError, DomainErrorKind } from '../errors/domain-error.js';

const KIND = {
  /** No endpoint, delivery, organizer or application the caller manages has this id. */
  NOT_FOUND: 'not_found',
  /** The caller may see the owner but not manage its endpoints (check-in staff, a member of nothing). */
  FORBIDDEN: 'forbidden',
  /** Neither or both of an organizer and an application given as the owner of a new endpoint. */
  INVALID_OWNER: 'invalid',
  /** Not an address endpoints may have: malformed, not https (http only where the operator allows it), too long, with credentials. */
  INVALID_URL: 'invalid',
  /** The address names (or resolves to) a target that is not public: loopback, private, link-local, metadata… */
  TARGET_NOT_ALLOWED: 'invalid',
  /** No event type, an unknown one, or one repeated. */
  INVALID_EVENT_TYPES: 'invalid',
  /** Longer than 500 characters. */
  INVALID_DESCRIPTION: 'invalid',
  /** Hours the previous secret keeps signing during a rotation: 0 to 168. */
  INVALID_ROTATION: 'invalid',
  /** The owner already has the most endpoints it may have (20). */
  TOO_MANY_ENDPOINTS: 'conflict',
  /** Creating an endpoint needs a verified e-mail address, as creating an organizer or a token does. */
  EMAIL_NOT_VERIFIED: 'forbidden',
  /** Test events and redeliveries: at most 10 a minute per endpoint. */
  RATE_LIMITED: 'rate_limited',
} as const satisfies Record<string, DomainErrorKind>;

export type WebhookErrorCode = keyof typeof KIND;

/**
 * Every failure of managing webhooks, with a stable code; each edge maps its kind like EventError's
 * (GraphQL: `extensions.code` with `reason`, or `userErrors` for invalid input; REST: status and
 * `code`; pages: the form's errors, or the error page).
 */
export class WebhookError extends DomainError {
  constructor(code: WebhookErrorCode, message: string, field?: string) {
    super(KIND[code], code, message, field);
  }

  static notFound(what: keyof typeof NOT_FOUND, field?: string): WebhookError {
    return new WebhookError('NOT_FOUND', NOT_FOUND[what], field);
  }
}

const NOT_FOUND = {
  endpoint: 'No webhook endpoint with this id exists, or you do not manage it.',
  delivery: 'No webhook delivery with this id exists, or you do not manage its endpoint.',
  organizer: 'No organizer with this id exists.',
  application: 'No application with this id exists, or it is not yours.',
};

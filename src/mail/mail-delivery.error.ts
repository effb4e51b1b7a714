/**
 * A mail the transport did not take. Thrown for temporary (4xx) and permanent (5xx) refusals alike: the
 * job that sends retries with backoff and gives up after its attempts.
 */
export class MailDeliveryError extends Error {
  constructor(
    message: string,
    /** The SMTP reply code, when the server answered one. */
    readonly responseCode?: number,
  ) {
    super(message);
    this.name = 'MailDeliveryError';
  }

  /** A 5xx reply: trying the same mail again will not help. */
  get permanent(): boolean {
    return this.responseCode !== undefined && this.responseCode >= 500;
  }
}

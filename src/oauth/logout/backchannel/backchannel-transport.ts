import { Injectable } from '@nestjs/common';

/** How one logout token's delivery went: 2xx succeeded; anything else (a refused target included) failed. */
export interface FormPostResult {
  succeeded: boolean;
  status: number | null;
  /** Why it failed, in words, when there is no status (refused target, timeout, connection error). */
  error: string | null;
}

/** Posts a form to an address a client registered, refusing private targets (server-side request forgery). */
export type FormPoster = (url: string, form: URLSearchParams) => Promise<FormPostResult>;

/**
 * The outbound HTTP client of back-channel logout. The client that refuses private targets, pins the
 * resolved address and follows no redirect is the webhooks' (src/webhooks/outbound/); WebhooksModule
 * depends on this module, so it registers that client here when it starts (as ReturnOrigins is provided),
 * rather than this module importing it.
 */
@Injectable()
export class BackchannelTransport {
  private poster: FormPoster | null = null;

  accept(poster: FormPoster): void {
    this.poster = poster;
  }

  post(url: string, form: URLSearchParams): Promise<FormPostResult> {
    if (!this.poster) throw new Error('No outbound HTTP client is registered for back-channel logout (WebhooksModule is not loaded)');
    return this.poster(url, form);
  }
}

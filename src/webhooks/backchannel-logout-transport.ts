import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { BackchannelTransport } from '../oauth/logout/backchannel/backchannel-transport.js';
import { postWebhook } from '../outbound/outbound.js';

/**
 * Lends the webhooks' outbound client (no private targets unless WEBHOOKS_ALLOW_PRIVATE_TARGETS, the
 * address pinned, no redirects, 10 s) to OpenID Connect back-channel logout, which posts logout tokens
 * to addresses clients registered: the same risk, the same defence.
 */
@Injectable()
export class BackchannelLogoutTransport implements OnModuleInit {
  constructor(
    private readonly transport: BackchannelTransport,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    const userAgent = `Agora-Backchannel-Logout/1 (+${this.config.baseUrl.replace(/\/+$/, '')}/docs)`;
    this.transport.accept(async (url, form) => {
      const response = await postWebhook(
        { url, headers: { 'user-agent': userAgent }, body: form.toString(), contentType: 'application/x-www-form-urlencoded' },
        this.config.webhooks,
      );
      return { succeeded: response.outcome === 'succeeded', status: response.status, error: response.error };
    });
  }
}

import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { DATABASE_TARGET } from '../database/database.module.js';
import type { DatabaseTarget } from '../database/database-target.js';
import { CredentialCache } from './credential-cache.js';

export const CREDENTIAL_CHANNEL = 'agora_credentials';
const RECONNECT_DELAY_MS = 1000;

/**
 * Listens on PostgreSQL's `agora_credentials` channel, fed by triggers on every change to a credential
 * or its user, and evicts those entries from this instance's credential cache. While not listening,
 * the cache is suspended, so a missed notification can never leave a revoked token usable.
 */
@Injectable()
export class CredentialChangeListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(CredentialChangeListener.name);
  private client?: pg.Client;
  private stopped = false;
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly cache: CredentialCache,
    @Inject(DATABASE_TARGET) private readonly target: DatabaseTarget,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.cache.enabled) return;
    this.cache.suspend();
    await this.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.target.connection.url, application_name: 'agora-credential-listener' });
    client.on('notification', (message) => this.evict(message.payload ?? ''));
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CREDENTIAL_CHANNEL}`);
      this.client = client;
      this.cache.resume();
    } catch (err) {
      this.lost(client, err as Error);
    }
  }

  private lost(client: pg.Client, err?: Error): void {
    this.cache.suspend();
    if (this.stopped || this.retry) return;
    if (err) this.logger.warn(`Credential change notifications lost (${err.message}); credential cache off until reconnected`);
    client.removeAllListeners();
    void client.end().catch(() => undefined);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connect();
    }, RECONNECT_DELAY_MS);
  }

  private evict(payload: string): void {
    const [table, id] = payload.split(':');
    if (!id) return this.cache.clear();
    if (table === 'users') this.cache.forgetUser(id);
    else this.cache.forgetCredential(id);
  }
}

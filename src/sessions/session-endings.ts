import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/**
 * Told of sessions about to end (signed out, replaced by a new sign-in, ended from the security page, by a
 * password change or reset, by blocking the user, or expired and purged by housekeeping), in the
 * transaction that deletes them, while their rows are still there and locked: what it writes (a job: an
 * outbox) commits with the ending.
 */
export interface SessionEndingListener {
  sessionsEnding(sessionIds: readonly string[], tx: EntityManager): Promise<void>;
}

/**
 * Who wants to know when sessions end: OpenID Connect back-channel logout (src/oauth/) registers here
 * when it starts (it depends on this module, not the other way round), as ReturnOrigins does.
 */
@Injectable()
export class SessionEndings {
  private readonly listeners: SessionEndingListener[] = [];

  accept(listener: SessionEndingListener): void {
    this.listeners.push(listener);
  }

  async notify(sessionIds: readonly string[], tx: EntityManager): Promise<void> {
    if (sessionIds.length === 0) return;
    for (const listener of this.listeners) await listener.sessionsEnding(sessionIds, tx);
  }
}

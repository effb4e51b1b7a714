import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { UsersService } from '../users/users.service.js';
import { AccountLinks } from './account-links.service.js';

/**
 * A new password set by its owner (the security page) or by an operator (`users:set-password`). In the
 * change's transaction every other way in ends — the sessions (but the browser that asked), the sign-ins
 * waiting for a second step, the reset links mailed before — and `password-changed` is enqueued: a
 * rolled-back change ends nothing and tells no one (docs/account-security.md, "Changing the password").
 */
@Injectable()
export class PasswordChange {
  constructor(
    private readonly users: UsersService,
    private readonly sessions: SessionsService,
    private readonly links: AccountLinks,
    private readonly notices: SecurityNotices,
  ) {}

  /** The user's own change (current password required: UsersService.changePassword); how many other sessions ended. */
  async byUser(userId: string, keepSessionId: string, input: { currentPassword: string; newPassword: string }): Promise<number> {
    return this.users.changePassword(userId, input, (tx) => this.endOthers(tx, userId, keepSessionId));
  }

  /** An operator's (UsersService.setPassword); every session of the user ends. */
  async byOperator(username: string, password: string): Promise<{ id: string; username: string; sessionsEnded: number }> {
    return this.users.setPassword(username, password, async (tx, user) => ({
      id: user.id,
      username: user.username,
      sessionsEnded: await this.endOthers(tx, user.id),
    }));
  }

  private async endOthers(tx: EntityManager, userId: string, keepSessionId?: string): Promise<number> {
    const ended = await this.sessions.endAllFor(userId, { keep: keepSessionId, tx });
    await this.links.endAll(tx, userId, ['reset-password']);
    await this.notices.notify(userId, { kind: 'password-changed' }, { tx });
    return ended;
  }
}

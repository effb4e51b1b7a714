import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { JobQueue } from '../jobs/job-queue.js';
import { AttemptThrottle } from '../sessions/attempt-throttle.js';
import { PasswordHasher } from '../users/password-hasher.js';
import { NewUserInput, validateNewUser } from '../users/user-validation.js';
import { UserError } from '../users/users.errors.js';
import { UsersService } from '../users/users.service.js';
import { AccountLinks } from './account-links.service.js';
import { ACCOUNT_MAIL } from './account-mail.job.js';

/**
 * Sign-up that does not tell whether an address has an account (as GitHub and GitLab): a new address gets
 * an unverified account and a verification link; an address that has an account gets nothing created and
 * its owner a mail ("someone tried to create an account with your address"). Both take the same steps,
 * the password hash included, so neither the answer nor its time differs. A taken username is said:
 * usernames are public.
 */
@Injectable()
export class SignUpService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersService,
    private readonly passwords: PasswordHasher,
    private readonly links: AccountLinks,
    private readonly throttle: AttemptThrottle,
    private readonly jobs: JobQueue,
  ) {}

  /** Invalid fields and USERNAME_TAKEN throw; otherwise the same outcome whatever the address. */
  async signUp(input: NewUserInput): Promise<void> {
    const valid = validateNewUser(input);
    if (await this.users.usernameTaken(valid.username)) throw new UserError('USERNAME_TAKEN', 'Username is already taken', 'username');
    const passwordHash = await this.passwords.hash(valid.password);
    // At most a few "someone tried" mails an hour to one address, however many sign-ups name it.
    const { retryAfterSeconds } = await this.throttle.reserveLinkMail([{ kind: 'signup-mail', value: valid.email }]);
    const mayTellOwner = retryAfterSeconds === 0;
    try {
      await this.dataSource.transaction(async (tx) => {
        const owner = await this.users.findByEmail(valid.email, tx);
        if (owner) {
          if (mayTellOwner) await this.jobs.enqueue(ACCOUNT_MAIL, { kind: 'sign-up-attempt', userId: owner.id }, { tx });
          return;
        }
        const user = await this.users.insert(tx, valid, passwordHash);
        await this.links.issue(tx, user.id, 'verify-email', user.email);
      });
    } catch (err) {
      if (!(err instanceof UserError) || err.code !== 'EMAIL_TAKEN') throw err;
      // A sign-up at the same moment took the address: as if it had had an account before.
      const owner = await this.users.findByEmail(valid.email);
      if (owner && mayTellOwner) await this.jobs.enqueue(ACCOUNT_MAIL, { kind: 'sign-up-attempt', userId: owner.id });
    }
  }
}

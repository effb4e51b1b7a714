import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, QueryFailedError, Raw, Repository } from 'typeorm';
import { EntityTable } from '../database/entity-table.js';
import { Clock } from '../clock/clock.js';
import { CredentialVerifier } from '../auth/credential-verifier.js';
import { PasswordHasher } from './password-hasher.js';
import { UserEntity, UserState } from './user.entity.js';
import { toUser, User } from './user.model.js';
import { NewUserInput, validateEmail, validateName, validateNewUser, validatePassword } from './user-validation.js';
import { checkAll } from '../errors/domain-error.js';
import { UserError } from './users.errors.js';

/** The columns `claimsAs` reads. */
export interface UserClaimsRow {
  username: string;
  name: string;
  email: string;
  email_verified: boolean;
  user_state: UserState;
}

/** What `selectAs` never reads for another feature: no model of a user carries them. */
const SECRET_COLUMNS: ReadonlySet<string> = new Set(['passwordHash', 'totpSecret', 'totpLastStep']);
@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
    private readonly passwords: PasswordHasher,
    private readonly credentials: CredentialVerifier,
    private readonly clock: Clock,
  ) {
    this.table = new EntityTable<UserEntity>(users.metadata, 'u');
  }

  private readonly table: EntityTable<UserEntity>;

  /**
   * Creates an account at once (the CLI, the demo seed, tests): `emailVerified` when whoever creates it
   * vouches for the address (an operator). Sign-up goes through `insert` instead, unverified.
   */
  async create(input: NewUserInput, options: { emailVerified?: boolean } = {}): Promise<User> {
    const valid = validateNewUser(input);
    const passwordHash = await this.passwords.hash(valid.password);
    return this.insert(this.users.manager, valid, passwordHash, options.emailVerified ? this.clock.now() : null);
  }

  /**
   * Inserts an account from a validated sign-up and its password hash, in the caller's transaction.
   * USERNAME_TAKEN or EMAIL_TAKEN when another account has either (case-insensitively).
   */
  async insert(manager: EntityManager, valid: NewUserInput, passwordHash: string, emailVerifiedAt: Date | null = null): Promise<User> {
    const users = manager.getRepository(UserEntity);
    try {
      const entity = await users.save(
        users.create({ username: valid.username, email: valid.email, name: valid.name, passwordHash, state: 'active', emailVerifiedAt }),
      );
      return toUser(entity);
    } catch (err) {
      throw uniqueViolationToUserError(err) ?? err;
    }
  }

  /** Whether an account has this username (case-insensitively): usernames are public, so sign-up may say so. */
  async usernameTaken(username: string): Promise<boolean> {
    return (await this.findEntityByLogin(username.trim(), 'username')) !== null;
  }

  /** The account with this e-mail address (case-insensitively), active or not; for the mails that prove it. */
  async findByEmail(email: string, manager: EntityManager = this.users.manager): Promise<User | null> {
    const entity = await manager.getRepository(UserEntity).findOneBy({ email: sameText(email.trim()) });
    return entity ? toUser(entity) : null;
  }

  /**
   * EMAIL_NOT_VERIFIED unless the user proved their address: what creating an application, a personal
   * token or an organizer requires (docs/account-security.md, "E-mail verification").
   */
  async requireVerifiedEmail(userId: string, manager: EntityManager = this.users.manager): Promise<void> {
    const entity = await manager.getRepository(UserEntity).findOne({ select: { id: true, emailVerifiedAt: true }, where: { id: userId } });
    if (entity && entity.emailVerifiedAt === null) {
      throw new UserError(
        'EMAIL_NOT_VERIFIED',
        'Verify your e-mail address first: follow the link we mailed to it (an operator can also mark it verified with users:verify-email)',
      );
    }
  }

  /**
   * Marks the user's address verified if it is still `email` (a link proves the address it was mailed
   * to, not whatever the account has now). Whether it did.
   */
  async markEmailVerified(manager: EntityManager, userId: string, email: string): Promise<boolean> {
    const result = (await manager.query(
      `UPDATE users SET email_verified_at = coalesce(email_verified_at, $3), updated_at = $3
        WHERE id = $1 AND lower(email) = lower($2) AND state = 'active' RETURNING id`,
      [userId, email, this.clock.now()],
    )) as [unknown[], number];
    return result[1] > 0;
  }

  /**
   * Makes a proven address the user's (a followed change-of-address link): EMAIL_TAKEN if another account
   * took it meanwhile. The address it replaces, or null when the account is gone or blocked.
   */
  async switchEmail(manager: EntityManager, userId: string, email: string): Promise<{ oldEmail: string } | null> {
    const [row] = (await manager.query(`SELECT email FROM users WHERE id = $1 AND state = 'active' FOR UPDATE`, [userId])) as {
      email: string;
    }[];
    if (!row) return null;
    try {
      await manager.query(`UPDATE users SET email = $2, email_verified_at = $3, updated_at = $3 WHERE id = $1`, [
        userId,
        email,
        this.clock.now(),
      ]);
    } catch (err) {
      throw uniqueViolationToUserError(err, 'change') ?? err;
    }
    return { oldEmail: row.email };
  }

  /**
   * Sets a new password from a followed reset link, under the sign-up rules (WEAK_PASSWORD on `password`).
   * The address is proven too: it received the link.
   */
  async resetPassword(manager: EntityManager, userId: string, password: string): Promise<User> {
    const entity = await manager.getRepository(UserEntity).findOneByOrFail({ id: userId });
    validatePassword(password, entity);
    const now = this.clock.now();
    await manager.query(
      `UPDATE users SET password_hash = $2, email_verified_at = coalesce(email_verified_at, $3), updated_at = $3 WHERE id = $1`,
      [userId, await this.passwords.hash(password), now],
    );
    return toUser(entity);
  }

  /** Drops what is cached of the user's credentials (their e-mail address is part of it). */
  async forgetCredentials(userId: string): Promise<void> {
    await this.credentials.forgetUser(userId);
  }

  async findById(id: string, manager: EntityManager = this.users.manager): Promise<User | null> {
    const entity = await manager.getRepository(UserEntity).findOneBy({ id });
    return entity ? toUser(entity) : null;
  }

  /** Every user, by username (for operators). */
  async list(): Promise<User[]> {
    return (await this.users.find({ order: { username: 'ASC' } })).map(toUser);
  }

  /**
   * The columns of a user under `alias` (a join on `users`), each named `alias.column`, the secrets left
   * out (the password hash, the authenticator's secret and last step): for a statement of another feature
   * that reads a user with its own rows (`fromRow` makes the user of it).
   */
  selectAs(alias: string): string {
    return this.readableColumns()
      .map((c) => `${alias}.${c.databaseName} AS "${alias}.${c.databaseName}"`)
      .join(', ');
  }

  /**
   * The user a credential stands for, under `alias` (a join on `users` in another feature's lookup of a
   * token, session or code): `UserClaimsRow`, as `CredentialRow` reads them. The user's id is the
   * credential's own `user_id`.
   */
  claimsAs(alias: string): string {
    const c = (property: keyof UserEntity & string) => `${alias}.${this.table.column(property)}`;
    return `${c('username')} AS username, ${c('name')} AS name, ${c('email')} AS email, ${c('emailVerifiedAt')} IS NOT NULL AS email_verified, ${c('state')} AS user_state`;
  }

  /** The user of a row holding `selectAs(alias)`, as `findManyByIds` gives it. */
  fromRow(row: Record<string, unknown>, alias: string): User {
    const entity = this.users.create();
    for (const c of this.readableColumns()) c.setEntityValue(entity, row[`${alias}.${c.databaseName}`]);
    return toUser(entity);
  }

  private readableColumns() {
    return this.users.metadata.columns.filter((c) => !SECRET_COLUMNS.has(c.propertyName));
  }

  /** Users with these ids, in one statement (DataLoader batches). */
  async findManyByIds(ids: readonly string[]): Promise<User[]> {
    if (ids.length === 0) return [];
    return (await this.users.findBy({ id: In([...ids]) })).map(toUser);
  }

  /** Which of these users are active (blocked ones are told nothing), read in `manager`'s transaction when given. */
  async activeIds(ids: readonly string[], manager: EntityManager = this.users.manager): Promise<string[]> {
    if (ids.length === 0) return [];
    const found = await manager.getRepository(UserEntity).find({ where: { id: In([...ids]), state: 'active' }, select: { id: true } });
    return found.map((u) => u.id);
  }

  /** The user with this username, if active: what anonymous callers may look up. */
  async findActiveByUsername(username: string): Promise<User | null> {
    const entity = await this.findEntityByLogin(username, 'username');
    return entity && entity.state === 'active' ? toUser(entity) : null;
  }

  async updateProfile(id: string, input: { name: string }): Promise<User> {
    const name = validateName(input.name);
    await this.users.update({ id }, { name });
    await this.credentials.forgetUser(id);
    const entity = await this.users.findOneByOrFail({ id });
    return toUser(entity);
  }

  /** The user's choice of non-essential messages (the account page; a mail's one-click unsubscribe). */
  async setMailReminders(id: string, on: boolean): Promise<User> {
    await this.users.update({ id }, { mailReminders: on });
    return toUser(await this.users.findOneByOrFail({ id }));
  }

  /**
   * Changes the user's own password: the current one is required, the new one must pass the same
   * rules as at sign-up. Every invalid field is reported at once. The update and `within` (what the
   * change ends and who is told: the caller's, as users know nothing of sessions or links) commit together.
   */
  async changePassword<T>(
    id: string,
    input: { currentPassword: string; newPassword: string },
    within: (tx: EntityManager) => Promise<T>,
  ): Promise<T> {
    const entity = await this.users.findOneByOrFail({ id });
    const currentOk = await this.passwords.verify(entity.passwordHash, input.currentPassword);
    checkAll({
      currentPassword: () => {
        if (!currentOk) throw new UserError('WRONG_PASSWORD', 'Current password is incorrect', 'currentPassword');
      },
      newPassword: () => validateNewPassword(input.newPassword, entity),
    });
    return this.updatePassword(id, await this.passwords.hash(input.newPassword), within);
  }

  /**
   * Checks a change of the user's e-mail address before a link is mailed to the new one: the current
   * password confirms it is them, the address must be valid, not theirs already, and not another
   * account's. The normalised new address.
   */
  async checkEmailChange(id: string, input: { currentPassword: string; email: string }): Promise<{ user: User; email: string }> {
    const entity = await this.users.findOneByOrFail({ id });
    const currentOk = await this.passwords.verify(entity.passwordHash, input.currentPassword);
    const email = input.email.trim();
    checkAll({
      currentPassword: () => {
        if (!currentOk) throw new UserError('WRONG_PASSWORD', 'Current password is incorrect', 'currentPassword');
      },
      email: () => {
        validateEmail(email);
        if (email.toLowerCase() === entity.email.toLowerCase()) throw new UserError('SAME_EMAIL', 'This is your address already', 'email');
      },
    });
    const owner = await this.findEntityByLogin(email, 'email');
    if (owner && owner.id !== id) throw new UserError('EMAIL_TAKEN', EMAIL_TAKEN.change, 'email');
    return { user: toUser(entity), email };
  }

  /**
   * An operator sets a user's password (a user who cannot sign in); same rules as at sign-up. The update
   * and `within` commit together, as in `changePassword`.
   */
  async setPassword<T>(username: string, password: string, within: (tx: EntityManager, user: User) => Promise<T>): Promise<T> {
    const entity = await this.findEntityByLogin(username, 'username');
    if (!entity) throw new UserError('USER_NOT_FOUND', `No user with username "${username}"`, 'username');
    validateNewPassword(password, entity);
    const user = toUser(entity);
    return this.updatePassword(entity.id, await this.passwords.hash(password), (tx) => within(tx, user));
  }

  /** The slow hash is computed before: the transaction holds the row only for the update and `within`. */
  private async updatePassword<T>(id: string, passwordHash: string, within: (tx: EntityManager) => Promise<T>): Promise<T> {
    const result = await this.users.manager.transaction(async (tx) => {
      await tx.getRepository(UserEntity).update({ id }, { passwordHash });
      return within(tx);
    });
    await this.credentials.forgetUser(id);
    return result;
  }

  /**
   * An operator sets a user's e-mail address (a user who lost access to the old one). Trusted, as an
   * administrator's change is on GitLab: the address counts as verified at once.
   */
  async setEmail(username: string, email: string): Promise<User & { oldEmail: string }> {
    const entity = await this.findEntityByLogin(username, 'username');
    if (!entity) throw new UserError('USER_NOT_FOUND', `No user with username "${username}"`, 'username');
    const trimmed = email.trim();
    validateEmail(trimmed);
    try {
      await this.users.update({ id: entity.id }, { email: trimmed, emailVerifiedAt: this.clock.now() });
    } catch (err) {
      throw uniqueViolationToUserError(err, 'change') ?? err;
    }
    await this.credentials.forgetUser(entity.id);
    return { ...toUser({ ...entity, email: trimmed, emailVerifiedAt: this.clock.now() }), oldEmail: entity.email };
  }

  /** An operator marks a user's address verified (`users:verify-email`): whether it was not already. */
  async verifyEmail(username: string): Promise<{ user: User; changed: boolean }> {
    const entity = await this.findEntityByLogin(username, 'username');
    if (!entity) throw new UserError('USER_NOT_FOUND', `No user with username "${username}"`, 'username');
    if (entity.emailVerifiedAt) return { user: toUser(entity), changed: false };
    const now = this.clock.now();
    await this.users.update({ id: entity.id }, { emailVerifiedAt: now });
    return { user: toUser({ ...entity, emailVerifiedAt: now }), changed: true };
  }

  async getByUsername(username: string): Promise<User> {
    const entity = await this.findEntityByLogin(username, 'username');
    if (!entity) throw new UserError('USER_NOT_FOUND', `No user with username "${username}"`, 'username');
    return toUser(entity);
  }

  /**
   * What password attempts for this login are counted under: the user's id, whether they typed their
   * username or their e-mail address, or the login itself when no user has it.
   */
  async throttleKey(login: string): Promise<string> {
    const trimmed = login.trim();
    const entity = await this.findEntityByLogin(trimmed, trimmed.includes('@') ? 'email' : 'username');
    return entity ? accountThrottleKey(entity.id) : `login:${trimmed.toLowerCase()}`;
  }

  /**
   * The active user with this username or email and password, or null. Takes the same time whether or
   * not the login exists, so it cannot be used to find accounts.
   */
  async verifyCredentials(login: string, password: string): Promise<User | null> {
    const entity = await this.findEntityByLogin(login.trim(), login.includes('@') ? 'email' : 'username');
    const ok = await this.passwords.verify(entity?.passwordHash, password);
    return ok && entity && entity.state === 'active' ? toUser(entity) : null;
  }

  /** Blocks the user: every credential of theirs stops working on the next request. */
  async setState(username: string, state: 'active' | 'blocked'): Promise<User> {
    const user = await this.getByUsername(username);
    await this.users.update({ id: user.id }, { state });
    await this.credentials.forgetUser(user.id);
    return { ...user, state };
  }

  private findEntityByLogin(login: string, by: 'username' | 'email'): Promise<UserEntity | null> {
    return this.users.findOneBy({ [by]: sameText(login) });
  }
}

/** Equal to this text, case-insensitively (usernames and addresses are unique that way: the migration's indexes). */
function sameText(value: string) {
  return Raw((column) => `lower(${column}) = lower(:value)`, { value });
}

/** The key password attempts for this user are counted under, however they named themselves. */
export function accountThrottleKey(userId: string): string {
  return `user:${userId}`;
}

const EMAIL_TAKEN = {
  signUp: 'This email address cannot be used for a new account. If it is yours, sign in instead.',
  change: 'This email address is already used by another account.',
};

function uniqueViolationToUserError(err: unknown, when: keyof typeof EMAIL_TAKEN = 'signUp'): UserError | undefined {
  if (!(err instanceof QueryFailedError)) return undefined;
  const { code, constraint } = err.driverError as { code?: string; constraint?: string };
  if (code !== '23505') return undefined;
  if (constraint === 'users_username_lower_key') return new UserError('USERNAME_TAKEN', 'Username is already taken', 'username');
  if (constraint === 'users_email_lower_key') return new UserError('EMAIL_TAKEN', EMAIL_TAKEN[when], 'email');
  return undefined;
}

/** The sign-up password rules, reported on the form's `newPassword` field. */
function validateNewPassword(password: string, user: { username: string; email: string }): void {
  try {
    validatePassword(password, user);
  } catch (err) {
    if (err instanceof UserError) throw new UserError('WEAK_PASSWORD', err.message, 'newPassword');
    throw err;
  }
}

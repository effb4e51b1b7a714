import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, QueryFailedError, Repository } from 'typeorm';
import { CredentialVerifier } from '../auth/credential-verifier.js';
import { PasswordHasher } from './password-hasher.js';
import { UserEntity } from './user.entity.js';
import { toUser, User } from './user.model.js';
import { NewUserInput, validateEmail, validateName, validateNewUser, validatePassword } from './user-validation.js';
import { checkAll } from '../errors/domain-error.js';
import { UserError } from './users.errors.js';

@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
    private readonly passwords: PasswordHasher,
    private readonly credentials: CredentialVerifier,
  ) {}

  async create(input: NewUserInput): Promise<User> {
    const valid = validateNewUser(input);
    const passwordHash = await this.passwords.hash(valid.password);
    try {
      const entity = await this.users.save(
        this.users.create({ username: valid.username, email: valid.email, name: valid.name, passwordHash, state: 'active' }),
      );
      return toUser(entity);
    } catch (err) {
      throw uniqueViolationToUserError(err) ?? err;
    }
  }

  async findById(id: string): Promise<User | null> {
    const entity = await this.users.findOneBy({ id });
    return entity ? toUser(entity) : null;
  }

  /** Every user, by username (for operators). */
  async list(): Promise<User[]> {
    return (await this.users.find({ order: { username: 'ASC' } })).map(toUser);
  }

  /** Users with these ids, in one statement (DataLoader batches). */
  async findManyByIds(ids: readonly string[]): Promise<User[]> {
    if (ids.length === 0) return [];
    return (await this.users.findBy({ id: In([...ids]) })).map(toUser);
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
   * rules as at sign-up. Every invalid field is reported at once.
   */
  async changePassword(id: string, input: { currentPassword: string; newPassword: string }): Promise<void> {
    const entity = await this.users.findOneByOrFail({ id });
    const currentOk = await this.passwords.verify(entity.passwordHash, input.currentPassword);
    checkAll({
      currentPassword: () => {
        if (!currentOk) throw new UserError('WRONG_PASSWORD', 'Current password is incorrect', 'currentPassword');
      },
      newPassword: () => validateNewPassword(input.newPassword, entity),
    });
    await this.users.update({ id }, { passwordHash: await this.passwords.hash(input.newPassword) });
  }

  /** Changes the user's e-mail address; the current password confirms it is them. */
  async changeEmail(id: string, input: { currentPassword: string; email: string }): Promise<User> {
    const entity = await this.users.findOneByOrFail({ id });
    const currentOk = await this.passwords.verify(entity.passwordHash, input.currentPassword);
    const email = input.email.trim();
    checkAll({
      currentPassword: () => {
        if (!currentOk) throw new UserError('WRONG_PASSWORD', 'Current password is incorrect', 'currentPassword');
      },
      email: () => validateEmail(email),
    });
    try {
      await this.users.update({ id }, { email });
    } catch (err) {
      throw uniqueViolationToUserError(err, 'change') ?? err;
    }
    await this.credentials.forgetUser(id);
    return toUser(await this.users.findOneByOrFail({ id }));
  }

  /** An operator sets a user's password (a user who cannot sign in); same rules as at sign-up. */
  async setPassword(username: string, password: string): Promise<User> {
    const entity = await this.findEntityByLogin(username, 'username');
    if (!entity) throw new UserError('USER_NOT_FOUND', `No user with username "${username}"`, 'username');
    validateNewPassword(password, entity);
    await this.users.update({ id: entity.id }, { passwordHash: await this.passwords.hash(password) });
    return toUser(entity);
  }

  /** An operator sets a user's e-mail address (a user who lost access to the old one). */
  async setEmail(username: string, email: string): Promise<User> {
    const entity = await this.findEntityByLogin(username, 'username');
    if (!entity) throw new UserError('USER_NOT_FOUND', `No user with username "${username}"`, 'username');
    const trimmed = email.trim();
    validateEmail(trimmed);
    try {
      await this.users.update({ id: entity.id }, { email: trimmed });
    } catch (err) {
      throw uniqueViolationToUserError(err, 'change') ?? err;
    }
    await this.credentials.forgetUser(entity.id);
    return toUser({ ...entity, email: trimmed });
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
    return this.users.createQueryBuilder('u').where(`lower(u.${by}) = lower(:login)`, { login }).getOne();
  }
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

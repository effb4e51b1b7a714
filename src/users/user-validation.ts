import { checkAll } from '../errors/domain-error.js';
import { UserError } from './users.errors.js';

export const USERNAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{1,38}$/;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const PASSWORD_MIN_LENGTH = 10;
const PASSWORD_MAX_LENGTH = 256;
const COMMON_PASSWORDS = new Set([
  'password123',
  'password1234',
  '1234567890',
  'qwertyuiop',
  '1q2w3e4r5t',
  'iloveyou123',
  'letmein123',
  'welcome123',
  'administrator',
  'passw0rd123',
  'abcdefghij',
  '0123456789',
  'qwerty1234',
  'changeme123',
]);

export interface NewUserInput {
  username: string;
  email: string;
  name: string;
  password: string;
}

/** Normalises and checks a sign-up; throws the UserError of the one bad field, or an InvalidInput naming each. */
export function validateNewUser(input: NewUserInput): NewUserInput {
  const username = input.username.trim();
  const email = input.email.trim();
  const { name } = checkAll({
    name: () => validateName(input.name),
    username: () => validateUsername(username),
    email: () => validateEmail(email),
    password: () => validatePassword(input.password, { username, email }),
  });
  return { username, email, name, password: input.password };
}

export function validateUsername(username: string): void {
  if (!USERNAME_PATTERN.test(username)) {
    throw new UserError(
      'INVALID_USERNAME',
      'Username must be 2 to 39 characters: letters, digits, "_", "." or "-", starting with a letter or digit',
      'username',
    );
  }
}

export function validateEmail(email: string): void {
  if (email.length > 254 || !EMAIL_PATTERN.test(email)) {
    throw new UserError('INVALID_EMAIL', 'Email must be a valid address such as name@example.com', 'email');
  }
}

export function validateName(value: string): string {
  const name = value.trim();
  if (name.length < 1 || name.length > 255) {
    throw new UserError('INVALID_NAME', 'Name must be 1 to 255 characters', 'name');
  }
  return name;
}

export function validatePassword(password: string, user: { username: string; email: string }): void {
  if (password.length < PASSWORD_MIN_LENGTH) {
    throw new UserError('WEAK_PASSWORD', `Password must be at least ${PASSWORD_MIN_LENGTH} characters`, 'password');
  }
  if (password.length > PASSWORD_MAX_LENGTH) {
    throw new UserError('WEAK_PASSWORD', `Password must be at most ${PASSWORD_MAX_LENGTH} characters`, 'password');
  }
  const lower = password.toLowerCase();
  if (COMMON_PASSWORDS.has(lower) || new Set(lower).size < 4) {
    throw new UserError('WEAK_PASSWORD', 'Password is too easy to guess', 'password');
  }
  // Only a valid username is compared: an invalid one is reported on its own field.
  const username = USERNAME_PATTERN.test(user.username) ? user.username.toLowerCase() : undefined;
  if ((username && lower.includes(username)) || lower === user.email.toLowerCase()) {
    throw new UserError('WEAK_PASSWORD', 'Password must not contain your username or email', 'password');
  }
}

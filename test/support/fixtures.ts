import { randomBytes } from 'node:crypto';
import { PersonalTokensService } from '../../src/personal-tokens/personal-tokens.service.js';
import { User } from '../../src/users/user.model.js';
import { UsersService } from '../../src/users/users.service.js';
import { TestApp } from './test-app.js';

export const TEST_PASSWORD = 'correct-horse-battery-staple';

/** A new active user with a unique username, whose e-mail address is verified unless `verified: false`. */
export async function createUser(
  t: TestApp,
  overrides: Partial<{ username: string; name: string; email: string; verified: boolean }> = {},
): Promise<User> {
  const suffix = randomBytes(4).toString('hex');
  return t.get(UsersService).create(
    {
      username: overrides.username ?? `user-${suffix}`,
      email: overrides.email ?? `user-${suffix}@example.com`,
      name: overrides.name ?? `Test User ${suffix}`,
      password: TEST_PASSWORD,
    },
    { emailVerified: overrides.verified ?? true },
  );
}

/** A user and a personal access token for them. */
export async function createUserWithToken(
  t: TestApp,
  scopes: string[] = ['api'],
  options: { expiresAt?: Date } = {},
): Promise<{ user: User; token: string; tokenId: string }> {
  const user = await createUser(t);
  const { token, personalToken } = await t
    .get(PersonalTokensService)
    .create(user.id, { name: 'test', scopes, expiresAt: options.expiresAt });
  return { user, token, tokenId: personalToken.id };
}

/** Every scope the service knows, with the plain-word description shown to users. */
export const SCOPES = {
  api: 'Read and write all of your data through the API',
  read_api: 'Read all of your data through the API (no changes)',
  openid: 'Sign you in and confirm who you are',
  profile: 'See your name and username',
  email: 'See your email address',
  offline_access: 'Keep access when you are not using the application',
} as const;

export type ScopeName = keyof typeof SCOPES;

/** Scopes a personal access token may carry. */
export const PERSONAL_TOKEN_SCOPES: readonly ScopeName[] = ['api', 'read_api'];

export function isScope(value: string): value is ScopeName {
  return Object.hasOwn(SCOPES, value);
}

/** Splits a space-separated scope string (RFC 6749 §3.3), dropping duplicates, keeping order. */
export function parseScopeList(value: string): string[] {
  return [...new Set(value.split(' ').filter((s) => s.length > 0))];
}

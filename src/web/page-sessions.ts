import type { AuthMethod } from '../auth/authentication-methods.js';
import type { User } from '../users/user.model.js';

/** The user a page request's session cookie signs in, and how. */
export interface SignedInUser {
  sessionId: string;
  /** When the user last proved who they are in this session: the sign-in, or a later second step. */
  authTime: Date;
  /** How (RFC 8176): `['pwd']`, `['pwd', 'otp', 'mfa']`, `['swk', 'mfa']`… */
  amr: AuthMethod[];
  /** When the password was last typed again in this session for a sensitive change (sudo mode); null: never. */
  reauthenticatedAt: Date | null;
  user: Pick<User, 'id' | 'username' | 'name' | 'email' | 'emailVerified'>;
}

/**
 * Who is signed in, from a page request's session cookie: what PageGuard asks. The sessions module
 * provides it (SessionsService) and registers the guard; web depends on no part of it at run time.
 */
export abstract class PageSessions {
  abstract resolve(cookieValue: string | undefined): Promise<SignedInUser | null>;
}

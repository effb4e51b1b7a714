import { UserEntity, UserState } from './user.entity.js';

/** A user as the rest of the service sees it: never the password hash. */
export interface User {
  id: string;
  username: string;
  name: string;
  email: string;
  /** Whether the owner of `email` proved it (the link mailed at sign-up or on a change of address). */
  emailVerified: boolean;
  state: UserState;
  /** Whether the user gets the messages that are not about their own seat (reminders). */
  mailReminders: boolean;
  createdAt: Date;
}

/** What the GraphQL `User` type is resolved from: any user model with these fields (the parent of its resolvers). */
export type UserProfile = Pick<User, 'id' | 'username' | 'name'>;

export function toUser(entity: UserEntity): User {
  return {
    id: entity.id,
    username: entity.username,
    name: entity.name,
    email: entity.email,
    emailVerified: entity.emailVerifiedAt !== null,
    state: entity.state,
    mailReminders: entity.mailReminders,
    createdAt: entity.createdAt,
  };
}

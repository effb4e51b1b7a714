import type { Event, OrganizerRoleValue } from './events.model.js';

/**
 * The caller's role in an organizer: a member's, or `service_account` for a service account's token
 * in its own organizer (docs/oauth.md, "Service accounts and client_credentials"). A service account
 * acts for its organizer as an admin does for events, ticket types, registrations and check-in, within
 * what its token's scopes let it run (`read_api`: reads only); it is never a member of another
 * organizer, never manages the team, the organizer's settings or its service accounts.
 */
export type CallerRole = OrganizerRoleValue | 'service_account';

/**
 * Who may see and do what in the events domain, as pure functions of the caller's role in the
 * organizer (null: not a member, or anonymous). Services apply them; edges never decide access.
 */
export const EventsPolicy = {
  /** Drafts and private events are for the organizer's team; the rest is public. */
  canView(event: Pick<Event, 'status' | 'visibility'>, role: CallerRole | null): boolean {
    return role !== null || (event.status !== 'draft' && event.visibility !== 'private');
  },

  /** Listed on public pages and in `events`: published and public. */
  isListed(event: Pick<Event, 'status' | 'visibility'>): boolean {
    return event.status === 'published' && event.visibility === 'public';
  },

  canSeeOnlineUrl(role: CallerRole | null, confirmedAttendee: boolean): boolean {
    return role !== null || confirmedAttendee;
  },

  canSeeHiddenTicketTypes(role: CallerRole | null): boolean {
    return role !== null;
  },

  /** Edit events and ticket types, cancel registrations. */
  canManage(role: CallerRole | null): boolean {
    return role === 'owner' || role === 'admin' || role === 'service_account';
  },

  /** Change the organizer itself (name, description, website) and manage non-owner members: people only. */
  canManageOrganizer(role: CallerRole | null): boolean {
    return role === 'owner' || role === 'admin';
  },

  /** Registrations, attendees and their emails; checking in. */
  canSeeAttendees(role: CallerRole | null): boolean {
    return role !== null;
  },

  /** A user's own lists (registrations, memberships): for that user only. */
  canReadOwnLists(callerId: string | null, userId: string): boolean {
    return callerId === userId;
  },

  /** Requiring a second factor of the team, or no longer, and its grace period: owners, as GitHub and GitLab have it. */
  canRequireSecondFactor(role: CallerRole | null): boolean {
    return role === 'owner';
  },

  /** Granting, changing or removing `role` for someone else. */
  canAssignRole(role: CallerRole | null, target: OrganizerRoleValue): boolean {
    return role === 'owner' || (role === 'admin' && target !== 'owner');
  },

  /**
   * Creating, listing and deleting the organizer's service accounts: owners, as for the second-factor
   * requirement. A service account holds an admin's powers over events, so making one is a decision
   * about the whole organizer's security, which GitHub and GitLab leave to organization owners.
   */
  canManageServiceAccounts(role: CallerRole | null): boolean {
    return role === 'owner';
  },
};

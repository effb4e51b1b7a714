import type { Event, OrganizerRoleValue } from './events.model.js';

/**
 * Who may see and do what in the events domain, as pure functions of the caller's role in the
 * organizer (null: not a member, or anonymous). Services apply them; edges never decide access.
 */
export const EventsPolicy = {
  /** Drafts and private events are for the organizer's team; the rest is public. */
  canView(event: Pick<Event, 'status' | 'visibility'>, role: OrganizerRoleValue | null): boolean {
    return role !== null || (event.status !== 'draft' && event.visibility !== 'private');
  },

  /** Listed on public pages and in `events`: published and public. */
  isListed(event: Pick<Event, 'status' | 'visibility'>): boolean {
    return event.status === 'published' && event.visibility === 'public';
  },

  canSeeOnlineUrl(role: OrganizerRoleValue | null, confirmedAttendee: boolean): boolean {
    return role !== null || confirmedAttendee;
  },

  canSeeHiddenTicketTypes(role: OrganizerRoleValue | null): boolean {
    return role !== null;
  },

  /** Edit events and ticket types, cancel registrations, manage non-owner members. */
  canManage(role: OrganizerRoleValue | null): boolean {
    return role === 'owner' || role === 'admin';
  },

  /** Registrations, attendees and their emails; checking in. */
  canSeeAttendees(role: OrganizerRoleValue | null): boolean {
    return role !== null;
  },

  /** A user's own lists (registrations, memberships): for that user only. */
  canReadOwnLists(callerId: string | null, userId: string): boolean {
    return callerId === userId;
  },

  /** Requiring a second factor of the team, or no longer, and its grace period: owners, as GitHub and GitLab have it. */
  canRequireSecondFactor(role: OrganizerRoleValue | null): boolean {
    return role === 'owner';
  },

  /** Granting, changing or removing `role` for someone else. */
  canAssignRole(role: OrganizerRoleValue | null, target: OrganizerRoleValue): boolean {
    return role === 'owner' || (role === 'admin' && target !== 'owner');
  },
};

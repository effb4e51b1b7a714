import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { Assignments } from '../database/assignments.js';
import type { Page, PageRequest, SortKey } from '../database/keyset.js';
import { KeysetPager } from '../database/keyset-pager.js';
import { violatedUniqueConstraint } from '../database/postgres-errors.js';
import { SecondFactors } from '../users/second-factors.js';
import { UsersService } from '../users/users.service.js';
import { checkDescription, checkName, checkSlug, checkUrl, ifGiven } from './event-validation.js';
import { EventError } from './events.errors.js';
import type { Organizer, OrganizerMember, OrganizerRoleValue } from './events.model.js';
import { CallerRole, EventsPolicy } from './events.policy.js';
import type { EventsReader } from './events.reader.js';
import { checkAll } from '../errors/domain-error.js';
import { EventTables } from './event-tables.js';
import { OrganizerEntity } from './organizer.entity.js';
import { OrganizerMemberEntity } from './organizer-member.entity.js';

export interface OrganizerInput {
  slug: string;
  name: string;
  description?: string | null;
  websiteUrl?: string | null;
}

export type OrganizerChanges = {
  name?: string | null;
  description?: string | null;
  websiteUrl?: string | null;
  /** Owners only: require a second factor of the team (true), or no longer (false). */
  requireSecondFactor?: boolean | null;
  /** Owners only: the grace period of that requirement, in hours (0 to 8,760). */
  secondFactorGraceHours?: number | null;
};

/** The longest grace period an organizer may give its team to set up a second factor: a year. */
export const MAX_SECOND_FACTOR_GRACE_HOURS = 8760;

/** Members by when they joined: an organizer's team, or the organizers a user belongs to. */
const byJoining = (list: 'Organizer.members' | 'User.organizerMemberships'): SortKey => ({
  list,
  columns: [
    { sql: 'm.created_at', type: 'timestamptz' },
    { sql: 'm.user_id', type: 'uuid' },
  ],
  direction: 'ASC',
});
const TEAM_ORDER = byJoining('Organizer.members');
const MEMBERSHIP_ORDER = byJoining('User.organizerMemberships');

/** Organizers and their teams. */
@Injectable()
export class OrganizersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersService,
    private readonly clock: Clock,
    private readonly pages: KeysetPager,
    private readonly tables: EventTables,
    private readonly secondFactors: SecondFactors,
  ) {}

  /** The organizers the user owns or administers ({ id, name }), by name: what they may give a webhook endpoint. */
  managedBy(userId: string): Promise<{ id: string; name: string }[]> {
    return this.withRoles(userId, ['owner', 'admin']);
  }

  /** The organizers the user owns ({ id, name }), by name: those whose service accounts they manage. */
  ownedBy(userId: string): Promise<{ id: string; name: string }[]> {
    return this.withRoles(userId, ['owner']);
  }

  private async withRoles(userId: string, roles: OrganizerRoleValue[]): Promise<{ id: string; name: string }[]> {
    const { organizers: o, members: m } = this.tables;
    const rows = (await this.dataSource.query(
      `SELECT ${o.alias}.${o.column('id')} AS id, ${o.alias}.${o.column('name')} AS name FROM ${o.name} ${o.alias}
         JOIN ${m.name} ${m.alias} ON ${m.alias}.${m.column('organizerId')} = ${o.alias}.${o.column('id')}
          AND ${m.alias}.${m.column('userId')} = $1 AND ${m.alias}.${m.column('role')} = ANY($2)
       ORDER BY ${o.alias}.${o.column('name')}`,
      [userId, roles],
    )) as { id: string; name: string }[];
    return rows;
  }

  /** The ids of the people who own or administer an organizer (whom to tell about its webhooks), read in `manager`'s transaction when given. */
  async managerIds(organizerId: string, manager: EntityManager = this.dataSource.manager): Promise<string[]> {
    const members = await manager.getRepository(OrganizerMemberEntity).find({
      where: { organizerId, role: In(['owner', 'admin']) },
      select: { userId: true },
    });
    return members.map((m) => m.userId);
  }

  /** An organizer's name, or null if there is none (what a notice names it by). */
  async nameOf(organizerId: string): Promise<string | null> {
    const found = await this.dataSource.getRepository(OrganizerEntity).findOne({ where: { id: organizerId }, select: { name: true } });
    return found?.name ?? null;
  }

  /** Holds the organizer's row (FOR NO KEY UPDATE) for the rest of `tx`, as a change that depends on it must. */
  async lockRow(tx: EntityManager, organizerId: string): Promise<void> {
    const o = this.tables.organizers;
    await tx.query(`SELECT 1 FROM ${o.name} WHERE ${o.column('id')} = $1 FOR NO KEY UPDATE`, [organizerId]);
  }

  /** A new organizer with the user as its owner; the user's e-mail address must be verified (EMAIL_NOT_VERIFIED). */
  async create(userId: string, input: OrganizerInput): Promise<Organizer> {
    await this.users.requireVerifiedEmail(userId);
    const { slug, name, description, websiteUrl } = checkAll({
      slug: () => checkSlug(input.slug.trim().toLowerCase(), 64),
      name: () => checkName(input.name, 200),
      description: () => checkDescription(input.description ?? '', 5000),
      websiteUrl: () => (input.websiteUrl ? checkUrl(input.websiteUrl, 'websiteUrl') : null),
    });
    const now = this.clock.now();
    const { organizers } = this.tables;
    try {
      return await this.dataSource.transaction(async (tx) => {
        const [row] = (await tx.query(
          `INSERT INTO organizers AS o (slug, name, description, website_url, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
           RETURNING ${organizers.select}`,
          [slug, name, description, websiteUrl, now],
        )) as Record<string, unknown>[];
        await tx.query(`INSERT INTO organizer_members (organizer_id, user_id, role, created_at) VALUES ($1, $2, 'owner', $3)`, [
          row!.id,
          userId,
          now,
        ]);
        return organizers.map(row!);
      });
    } catch (err) {
      if (violatedUniqueConstraint(err) === 'organizers_slug_key')
        throw new EventError('SLUG_TAKEN', 'This slug is already taken.', 'slug');
      throw err;
    }
  }

  async update(reader: EventsReader, organizerId: string, changes: OrganizerChanges): Promise<Organizer> {
    const requirement = changes.requireSecondFactor != null || changes.secondFactorGraceHours != null;
    await (requirement
      ? this.requireRole(reader, organizerId, EventsPolicy.canRequireSecondFactor, "change this organizer's second-factor requirement")
      : this.requireRole(reader, organizerId, EventsPolicy.canManageOrganizer, 'change this organizer'));
    const valid = checkAll({
      name: () => ifGiven(changes.name, (name) => checkName(name, 200)),
      description: () => ifGiven(changes.description, (description) => checkDescription(description, 5000)),
      websiteUrl: () => ifGiven(changes.websiteUrl, (url) => (url === '' ? null : checkUrl(url, 'websiteUrl'))),
      secondFactorGraceHours: () => ifGiven(changes.secondFactorGraceHours, checkGraceHours),
    });
    // As GitHub asks of an organization's owner: their own account first, so they are not the first one locked out.
    if (changes.requireSecondFactor === true && !(await this.secondFactors.has(reader.userId!))) {
      throw new EventError(
        'OWNER_WITHOUT_SECOND_FACTOR',
        'Set up a second factor for your own account (an authenticator app or a passkey, on your security page) before requiring one of the team.',
        'requireSecondFactor',
      );
    }
    const now = this.clock.now();
    const update = new Assignments([organizerId]);
    const set = (column: string, value: unknown) => update.set(column, value);
    if (valid.name !== undefined) set('name', valid.name);
    if (valid.description !== undefined) set('description', valid.description);
    if (valid.websiteUrl !== undefined) set('website_url', valid.websiteUrl);
    if (valid.secondFactorGraceHours !== undefined) set('second_factor_grace_hours', valid.secondFactorGraceHours);
    if (changes.requireSecondFactor != null) {
      // Required already: it keeps its start (the grace period does not begin again).
      const since = (await reader.organizers.load(organizerId))!.secondFactorRequiredSince;
      set('second_factor_required_since', changes.requireSecondFactor ? (since ?? now) : null);
    }
    set('updated_at', now);
    const { organizers } = this.tables;
    const [rows] = (await reader.writeOrganizer(organizerId, (db) =>
      db.query(`UPDATE organizers o SET ${update.toSql()} WHERE o.id = $1 RETURNING ${organizers.select}`, update.params),
    )) as [Record<string, unknown>[], number];
    return organizers.map(rows[0]!);
  }

  async findBySlug(slug: string): Promise<Organizer | null> {
    const { organizers } = this.tables;
    const rows = (await this.dataSource.query(`SELECT ${organizers.select} FROM organizers o WHERE o.slug = $1`, [
      slug.toLowerCase(),
    ])) as Record<string, unknown>[];
    return rows[0] ? organizers.map(rows[0]) : null;
  }

  async addMember(reader: EventsReader, organizerId: string, username: string, role: OrganizerRoleValue): Promise<OrganizerMember> {
    const callerRole = await this.requireRole(reader, organizerId, EventsPolicy.canManageOrganizer, 'add members');
    if (!EventsPolicy.canAssignRole(callerRole, role)) throw EventError.forbidden('grant the owner role');
    const user = await this.userNamed(username);
    const { members } = this.tables;
    try {
      const rows = (await reader.writeOrganizer(organizerId, (db) =>
        db.query(
          `INSERT INTO organizer_members AS m (organizer_id, user_id, role, created_at) VALUES ($1, $2, $3, $4) RETURNING ${members.select}`,
          [organizerId, user.id, role, this.clock.now()],
        ),
      )) as Record<string, unknown>[];
      return members.map(rows[0]!);
    } catch (err) {
      if (violatedUniqueConstraint(err) === 'organizer_members_pkey') {
        throw new EventError('ALREADY_MEMBER', `${user.username} is already a member; change their role instead.`, 'username');
      }
      throw err;
    }
  }

  async updateMember(reader: EventsReader, organizerId: string, username: string, role: OrganizerRoleValue): Promise<OrganizerMember> {
    const callerRole = await this.requireRole(reader, organizerId, EventsPolicy.canManageOrganizer, 'change roles');
    const user = await this.userNamed(username);
    return this.changeTeam(reader, organizerId, async (tx, members) => {
      const current = members.get(user.id);
      if (!current) throw new EventError('MEMBER_NOT_FOUND', `${user.username} is not a member of this organizer.`, 'username');
      if (!EventsPolicy.canAssignRole(callerRole, current) || !EventsPolicy.canAssignRole(callerRole, role)) {
        throw EventError.forbidden('grant or take the owner role');
      }
      if (current === 'owner' && role !== 'owner') this.keepAnOwner(members, user.id);
      const rows = (await tx.query(
        `UPDATE organizer_members m SET role = $3 WHERE organizer_id = $1 AND user_id = $2 RETURNING ${this.tables.members.select}`,
        [organizerId, user.id, role],
      )) as [Record<string, unknown>[], number];
      return this.tables.members.map(rows[0][0]!);
    });
  }

  async removeMember(reader: EventsReader, organizerId: string, username: string): Promise<Organizer> {
    const user = await this.userNamed(username);
    const removingSelf = user.id === reader.userId;
    // Leaving needs no second factor: a member held back by the requirement may still go.
    const callerRole = removingSelf
      ? await this.requireMembership(reader, organizerId)
      : await this.requireRole(reader, organizerId, EventsPolicy.canManageOrganizer, 'remove members');
    await this.changeTeam(reader, organizerId, async (tx, members) => {
      const current = members.get(user.id);
      if (!current) throw new EventError('MEMBER_NOT_FOUND', `${user.username} is not a member of this organizer.`, 'username');
      if (!removingSelf && !EventsPolicy.canAssignRole(callerRole, current)) throw EventError.forbidden('remove an owner');
      if (current === 'owner') this.keepAnOwner(members, user.id);
      await tx.query(`DELETE FROM organizer_members WHERE organizer_id = $1 AND user_id = $2`, [organizerId, user.id]);
    });
    return (await reader.organizers.load(organizerId))!;
  }

  /** The teams of several organizers, one page each. Callers check who may see them. */
  membersPages(organizerIds: readonly string[], request: PageRequest): Promise<Map<string, Page<OrganizerMember>>> {
    return this.pages.pagesByParent(
      { select: this.tables.members.select, from: 'organizer_members m', where: [], params: [] },
      'm.organizer_id',
      organizerIds,
      TEAM_ORDER,
      request,
      this.tables.members.map,
    );
  }

  /** An organizer's team (its members and their roles) is for the team: the one rule GraphQL and REST both apply. */
  async requireCanSeeTeam(reader: EventsReader, organizerId: string): Promise<void> {
    if (!EventsPolicy.canSeeAttendees(await reader.role(organizerId))) throw await reader.refusal(organizerId, "see this organizer's team");
  }

  /** The organizers a user belongs to. */
  membershipsOf(reader: EventsReader, userId: string, request: PageRequest): Promise<Page<OrganizerMember>> {
    if (!EventsPolicy.canReadOwnLists(reader.userId, userId)) throw EventError.viewerOnly('organizer memberships');
    return this.pages.page(
      { select: this.tables.members.select, from: 'organizer_members m', where: ['m.user_id = $1'], params: [userId] },
      MEMBERSHIP_ORDER,
      request,
      this.tables.members.map,
    );
  }

  /**
   * The caller's role, refused unless `allowed`. An organizer that does not exist is not found;
   * organizers are public, so one that exists is plainly forbidden.
   */
  async requireRole(
    reader: EventsReader,
    organizerId: string,
    allowed: (role: CallerRole | null) => boolean,
    action: string,
  ): Promise<CallerRole | null> {
    const [organizer, role] = await Promise.all([reader.organizers.load(organizerId), reader.role(organizerId)]);
    if (!organizer) throw EventError.notFound('Organizer', 'organizerId');
    if (!allowed(role)) throw await reader.refusal(organizerId, action);
    return role;
  }

  /**
   * A member's second-factor deadline in an organizer (the viewer's, for `viewerSecondFactorDeadline`):
   * when they must have one to go on acting for it; null when it requires none or they have one.
   */
  async secondFactorDeadline(reader: EventsReader, organizerId: string): Promise<Date | null> {
    return (await reader.membership(organizerId))?.secondFactorDeadline ?? null;
  }

  private async requireMembership(reader: EventsReader, organizerId: string): Promise<CallerRole> {
    const [organizer, membership] = await Promise.all([reader.organizers.load(organizerId), reader.membership(organizerId)]);
    if (!organizer) throw EventError.notFound('Organizer', 'organizerId');
    if (!membership) throw EventError.forbidden('leave this organizer');
    return membership.role;
  }

  private async userNamed(username: string) {
    const user = await this.users.findActiveByUsername(username);
    if (!user) throw new EventError('UNKNOWN_USER', 'No active user has this username.', 'username');
    return user;
  }

  /** Runs a change to the team with the organizer locked, given its members' roles. */
  private changeTeam<T>(
    reader: EventsReader,
    organizerId: string,
    change: (tx: EntityManager, members: Map<string, OrganizerRoleValue>) => Promise<T>,
  ): Promise<T> {
    return reader.changeOrganizer(organizerId, async (tx) => {
      const rows = (await tx.query(`SELECT user_id, role FROM organizer_members WHERE organizer_id = $1`, [organizerId])) as Record<
        string,
        unknown
      >[];
      return change(tx, new Map(rows.map((r) => [r.user_id as string, r.role as OrganizerRoleValue])));
    });
  }

  private keepAnOwner(members: Map<string, OrganizerRoleValue>, leaving: string): void {
    const owners = [...members].filter(([id, role]) => role === 'owner' && id !== leaving);
    if (owners.length === 0)
      throw new EventError('LAST_OWNER', 'An organizer keeps at least one owner: make someone else owner first.', 'username');
  }
}

function checkGraceHours(hours: number): number {
  if (!Number.isInteger(hours) || hours < 0 || hours > MAX_SECOND_FACTOR_GRACE_HOURS) {
    throw new EventError(
      'INVALID_GRACE_HOURS',
      `The grace period is a whole number of hours from 0 to ${MAX_SECOND_FACTOR_GRACE_HOURS} (a year).`,
      'secondFactorGraceHours',
    );
  }
  return hours;
}

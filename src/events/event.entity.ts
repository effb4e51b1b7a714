import {
  Check,
  Column,
  Unique,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import { OrganizerEntity } from './organizer.entity.js';

export type EventFormatValue = 'in_person' | 'online' | 'hybrid';
export type EventStatusValue = 'draft' | 'published' | 'cancelled';
export type EventVisibilityValue = 'public' | 'unlisted' | 'private';

@Entity({ name: 'events' })
@Unique('events_slug_key', ['slug'])
@Index('events_public_listing_idx', ['startsAt', 'id'], { where: `status = 'published' AND visibility = 'public'` })
@Index('events_organizer_id_idx', ['organizerId', 'startsAt', 'id'])
@Check('events_slug_check', `slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 100`)
@Check('events_title_check', `length(title) BETWEEN 1 AND 200`)
@Check('events_description_check', `length(description) <= 20000`)
@Check('events_format_check', `format IN ('in_person', 'online', 'hybrid')`)
@Check('events_venue_country_check', `venue_country ~ '^[A-Z]{2}$'`)
@Check('events_capacity_check', `capacity > 0`)
@Check('events_status_check', `status IN ('draft', 'published', 'cancelled')`)
@Check('events_visibility_check', `visibility IN ('public', 'unlisted', 'private')`)
@Check('events_time_range_check', `ends_at > starts_at`)
@Check('events_confirmed_seats_check', `confirmed_seats >= 0 AND (capacity IS NULL OR confirmed_seats <= capacity)`)
export class EventEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organizer_id', type: 'uuid' })
  organizerId: string;

  @ManyToOne(() => OrganizerEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organizer_id', foreignKeyConstraintName: 'events_organizer_id_fkey' })
  organizer?: OrganizerEntity;

  @Column({ type: 'text' })
  slug: string;

  @Column({ type: 'text' })
  title: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ name: 'starts_at', type: 'timestamptz' })
  startsAt: Date;

  @Column({ name: 'ends_at', type: 'timestamptz' })
  endsAt: Date;

  @Column({ name: 'time_zone', type: 'text' })
  timeZone: string;

  @Column({ type: 'text' })
  format: EventFormatValue;

  @Column({ name: 'venue_name', type: 'text', nullable: true })
  venueName: string | null;

  @Column({ name: 'venue_address', type: 'text', nullable: true })
  venueAddress: string | null;

  @Column({ name: 'venue_city', type: 'text', nullable: true })
  venueCity: string | null;

  @Column({ name: 'venue_country', type: 'text', nullable: true })
  venueCountry: string | null;

  /** Not for every reader: edges show it only where `EventsPolicy.canSeeOnlineUrl` allows. */
  @Column({ name: 'online_url', type: 'text', nullable: true })
  onlineUrl: string | null;

  @Column({ type: 'integer', nullable: true })
  capacity: number | null;

  @Column({ name: 'confirmed_seats', type: 'integer', default: 0 })
  confirmedSeats: number;

  @Column({ type: 'text', default: 'draft' })
  status: EventStatusValue;

  @Column({ type: 'text', default: 'public' })
  visibility: EventVisibilityValue;

  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt: Date | null;

  @Column({ name: 'cancelled_at', type: 'timestamptz', nullable: true })
  cancelledAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

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
import { UserEntity } from '../users/user.entity.js';
import { EventEntity } from './event.entity.js';
import { TicketTypeEntity } from './ticket-type.entity.js';

export type RegistrationStatusValue = 'confirmed' | 'waitlisted' | 'cancelled';
/** Who ended a registration: its registrant, the organizer's owner or admin, or the event's cancellation. */
export type CancelledByValue = 'attendee' | 'organizer' | 'event_cancelled';

@Entity({ name: 'registrations' })
@Unique('registrations_reference_key', ['reference'])
@Index('registrations_one_active_per_user_idx', ['eventId', 'userId'], { unique: true, where: `status <> 'cancelled'` })
@Index('registrations_waitlist_idx', ['eventId', 'queuePosition'], { where: `status = 'waitlisted'` })
@Index('registrations_event_id_idx', ['eventId', 'createdAt', 'id'])
@Index('registrations_user_id_idx', ['userId', 'createdAt', 'id'])
@Index('registrations_ticket_type_id_idx', ['ticketTypeId'])
@Check('registrations_status_check', `status IN ('confirmed', 'waitlisted', 'cancelled')`)
@Check('registrations_quantity_check', `quantity BETWEEN 1 AND 20`)
@Check('registrations_cancelled_by_check', `cancelled_by IN ('attendee', 'organizer', 'event_cancelled')`)
export class RegistrationEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'event_id', type: 'uuid' })
  eventId: string;

  @ManyToOne(() => EventEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'event_id', foreignKeyConstraintName: 'registrations_event_id_fkey' })
  event?: EventEntity;

  @Column({ name: 'ticket_type_id', type: 'uuid' })
  ticketTypeId: string;

  @ManyToOne(() => TicketTypeEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'ticket_type_id', foreignKeyConstraintName: 'registrations_ticket_type_id_fkey' })
  ticketType?: TicketTypeEntity;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'registrations_user_id_fkey' })
  user?: UserEntity;

  @Column({ type: 'text' })
  reference: string;

  @Column({ type: 'text' })
  status: RegistrationStatusValue;

  @Column({ type: 'integer' })
  quantity: number;

  @Column({ name: 'queue_position', type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS' })
  // A bigint, read as a number by the events services' SQL (event-tables.ts); no repository reads it.
  queuePosition: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'confirmed_at', type: 'timestamptz', nullable: true })
  confirmedAt: Date | null;

  @Column({ name: 'cancelled_at', type: 'timestamptz', nullable: true })
  cancelledAt: Date | null;

  @Column({ name: 'cancelled_by', type: 'text', nullable: true })
  cancelledBy: CancelledByValue | null;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

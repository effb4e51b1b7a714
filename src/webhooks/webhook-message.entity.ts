import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** One thing that happened, as the exact body every endpoint receives (its id is the `webhook-id`). */
@Entity({ name: 'webhook_messages' })
@Index('webhook_messages_created_at_idx', ['createdAt'])
@Check('webhook_messages_body_check', 'char_length(body) <= 65536')
export class WebhookMessageEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'webhook_messages_pkey' })
  id: string;

  @Column({ name: 'event_type', type: 'text' })
  eventType: string;

  @Column({ type: 'text' })
  body: string;

  /** What a domain event's message is about (null for test messages): an application's right to it is checked again at each attempt. */
  @Column({ name: 'organizer_id', type: 'uuid', nullable: true })
  organizerId: string | null;

  @Column({ name: 'event_id', type: 'uuid', nullable: true })
  eventId: string | null;

  @Column({ name: 'user_id', type: 'uuid', nullable: true })
  userId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

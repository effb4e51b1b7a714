import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { WebhookEndpointEntity } from './webhook-endpoint.entity.js';
import { WebhookMessageEntity } from './webhook-message.entity.js';
import type { WebhookDeliveryState } from './webhook-states.js';

/** One message to one endpoint: its state and when it is tried next. */
@Entity({ name: 'webhook_deliveries' })
@Unique('webhook_deliveries_message_endpoint_key', ['messageId', 'endpointId'])
@Index('webhook_deliveries_endpoint_log_idx', ['endpointId', 'createdAt', 'id'])
@Index('webhook_deliveries_due_idx', ['nextAttemptAt'], { where: `state = 'scheduled'` })
@Index('webhook_deliveries_queued_idx', ['queuedAt'], { where: `state = 'queued'` })
@Check('webhook_deliveries_state_check', `state IN ('scheduled', 'queued', 'succeeded', 'failed', 'skipped')`)
export class WebhookDeliveryEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'webhook_deliveries_pkey' })
  id: string;

  @Column({ name: 'message_id', type: 'uuid' })
  messageId: string;

  @ManyToOne(() => WebhookMessageEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'message_id', foreignKeyConstraintName: 'webhook_deliveries_message_id_fkey' })
  message?: WebhookMessageEntity;

  @Column({ name: 'endpoint_id', type: 'uuid' })
  endpointId: string;

  @ManyToOne(() => WebhookEndpointEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'endpoint_id', foreignKeyConstraintName: 'webhook_deliveries_endpoint_id_fkey' })
  endpoint?: WebhookEndpointEntity;

  @Column({ type: 'text' })
  state: WebhookDeliveryState;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'last_attempt_at', type: 'timestamptz', nullable: true })
  lastAttemptAt: Date | null;

  /** When it last became `queued` (Clock time): one queued much longer than an attempt job lives is queued again. */
  @Column({ name: 'queued_at', type: 'timestamptz', nullable: true })
  queuedAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

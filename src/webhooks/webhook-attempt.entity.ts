import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { WebhookDeliveryEntity } from './webhook-delivery.entity.js';
import type { WebhookAttemptTrigger } from './webhook-states.js';

/** One HTTP request of a delivery, as the delivery log shows it. */
@Entity({ name: 'webhook_attempts' })
@Unique('webhook_attempts_delivery_number_key', ['deliveryId', 'number'])
@Check('webhook_attempts_trigger_check', `trigger IN ('automatic', 'redelivery', 'test')`)
@Check('webhook_attempts_outcome_check', `outcome IN ('succeeded', 'failed')`)
@Check('webhook_attempts_response_body_check', 'char_length(response_body) <= 2048')
@Check('webhook_attempts_error_check', 'char_length(error) <= 500')
export class WebhookAttemptEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'webhook_attempts_pkey' })
  id: string;

  @Column({ name: 'delivery_id', type: 'uuid' })
  deliveryId: string;

  @ManyToOne(() => WebhookDeliveryEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'delivery_id', foreignKeyConstraintName: 'webhook_attempts_delivery_id_fkey' })
  delivery?: WebhookDeliveryEntity;

  /** 1 for the first attempt. */
  @Column({ type: 'integer' })
  number: number;

  @Column({ type: 'text' })
  trigger: WebhookAttemptTrigger;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs: number;

  @Column({ type: 'text' })
  outcome: 'succeeded' | 'failed';

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus: number | null;

  /** The response's first bytes (at most 2,048 characters). */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;

  /** Why it failed without a response: refused target, timeout, connection error (at most 500 characters). */
  @Column({ type: 'text', nullable: true })
  error: string | null;
}

import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizerEntity } from '../events/organizer.entity.js';
import { ApplicationEntity } from '../oauth/clients/application.entity.js';
import { UserEntity } from '../users/user.entity.js';
import type { WebhookEndpointState } from './webhook-states.js';

/** Where an organizer or an application wants to hear of events, and the secret its deliveries are signed with. */
@Entity({ name: 'webhook_endpoints' })
@Index('webhook_endpoints_organizer_id_idx', ['organizerId'], { where: 'organizer_id IS NOT NULL' })
@Index('webhook_endpoints_application_id_idx', ['applicationId'], { where: 'application_id IS NOT NULL' })
@Index('webhook_endpoints_created_by_idx', ['createdBy'])
@Check('webhook_endpoints_owner_check', '(organizer_id IS NULL) <> (application_id IS NULL)')
@Check('webhook_endpoints_url_check', 'char_length(url) <= 2048')
@Check('webhook_endpoints_description_check', 'char_length(description) <= 500')
@Check('webhook_endpoints_event_types_check', 'cardinality(event_types) BETWEEN 1 AND 20')
@Check('webhook_endpoints_state_check', `state IN ('active', 'paused', 'disabled')`)
export class WebhookEndpointEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'webhook_endpoints_pkey' })
  id: string;

  @Column({ name: 'organizer_id', type: 'uuid', nullable: true })
  organizerId: string | null;

  @ManyToOne(() => OrganizerEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organizer_id', foreignKeyConstraintName: 'webhook_endpoints_organizer_id_fkey' })
  organizer?: OrganizerEntity;

  @Column({ name: 'application_id', type: 'uuid', nullable: true })
  applicationId: string | null;

  @ManyToOne(() => ApplicationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'application_id', foreignKeyConstraintName: 'webhook_endpoints_application_id_fkey' })
  application?: ApplicationEntity;

  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ name: 'event_types', type: 'text', array: true })
  eventTypes: string[];

  @Column({ type: 'text', default: 'active' })
  state: WebhookEndpointState;

  /** Why it was disabled (by the service, after failing for days), shown to its owners. */
  @Column({ name: 'disabled_reason', type: 'text', nullable: true })
  disabledReason: string | null;

  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true })
  disabledAt: Date | null;

  /** The `whsec_` secret, sealed under a key derived from SECRET_KEY (purpose webhook-secrets). */
  @Column({ name: 'secret_sealed', type: 'text' })
  secretSealed: string;

  /** During a rotation: the secret before, still signing (beside the new one) until it expires. */
  @Column({ name: 'previous_secret_sealed', type: 'text', nullable: true })
  previousSecretSealed: string | null;

  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true })
  previousSecretExpiresAt: Date | null;

  /** The first failed attempt since the last success; null while it succeeds. */
  @Column({ name: 'failing_since', type: 'timestamptz', nullable: true })
  failingSince: Date | null;

  /** The latest failed attempt: a failure more than FAILURE_STREAK_GAP_MS after it starts a new streak. */
  @Column({ name: 'last_failed_at', type: 'timestamptz', nullable: true })
  lastFailedAt: Date | null;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @ManyToOne(() => UserEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by', foreignKeyConstraintName: 'webhook_endpoints_created_by_fkey' })
  creator?: UserEntity;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

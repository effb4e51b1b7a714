import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

@Entity({ name: 'legacy_api_usage' })
@Index('legacy_api_usage_day_idx', ['day'])
@Check('legacy_api_usage_subject_check', `subject = 'anonymous' OR subject ~ '^(personal_access_token|oauth_access_token):[0-9a-f-]{36}$'`)
@Check('legacy_api_usage_calls_check', `calls > 0`)
export class LegacyApiUsageEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'legacy_api_usage_pkey' })
  subject: string;

  @PrimaryColumn({ type: 'date', primaryKeyConstraintName: 'legacy_api_usage_pkey' })
  day: string;

  @Column({ name: 'user_id', type: 'uuid', nullable: true })
  userId: string | null;

  @Column({ type: 'bigint' })
  calls: string;

  @Column({ name: 'last_called_at', type: 'timestamptz' })
  lastCalledAt: Date;
}

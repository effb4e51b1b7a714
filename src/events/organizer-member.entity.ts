import { Check, CreateDateColumn, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';
import { OrganizerEntity } from './organizer.entity.js';

export type OrganizerRoleValue = 'owner' | 'admin' | 'check_in_staff';

@Entity({ name: 'organizer_members' })
@Index('organizer_members_user_id_idx', ['userId', 'createdAt'])
@Check('organizer_members_role_check', `role IN ('owner', 'admin', 'check_in_staff')`)
export class OrganizerMemberEntity {
  @PrimaryColumn({ name: 'organizer_id', type: 'uuid', primaryKeyConstraintName: 'organizer_members_pkey' })
  organizerId: string;

  @PrimaryColumn({ name: 'user_id', type: 'uuid', primaryKeyConstraintName: 'organizer_members_pkey' })
  userId: string;

  @ManyToOne(() => OrganizerEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organizer_id', foreignKeyConstraintName: 'organizer_members_organizer_id_fkey' })
  organizer?: OrganizerEntity;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'organizer_members_user_id_fkey' })
  user?: UserEntity;

  @Column({ type: 'text' })
  role: OrganizerRoleValue;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

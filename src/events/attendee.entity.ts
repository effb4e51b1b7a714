import { Check, Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { RegistrationEntity } from './registration.entity.js';

@Entity({ name: 'attendees' })
@Unique('attendees_registration_position_key', ['registrationId', 'position'])
@Check('attendees_name_check', `length(name) BETWEEN 1 AND 200`)
@Check('attendees_email_check', `length(email) BETWEEN 3 AND 254 AND position('@' in email) > 1`)
export class AttendeeEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'registration_id', type: 'uuid' })
  registrationId: string;

  @ManyToOne(() => RegistrationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'registration_id', foreignKeyConstraintName: 'attendees_registration_id_fkey' })
  registration?: RegistrationEntity;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  email: string;

  @Column({ type: 'integer' })
  position: number;

  @Column({ name: 'checked_in_at', type: 'timestamptz', nullable: true })
  checkedInAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

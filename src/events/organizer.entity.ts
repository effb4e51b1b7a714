import { Check, Column, Unique, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity({ name: 'organizers' })
@Unique('organizers_slug_key', ['slug'])
@Check('organizers_slug_check', `slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 64`)
@Check('organizers_name_check', `length(name) BETWEEN 1 AND 200`)
@Check('organizers_description_check', `length(description) <= 5000`)
@Check('organizers_second_factor_grace_hours_check', `second_factor_grace_hours BETWEEN 0 AND 8760`)
export class OrganizerEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  slug: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ name: 'website_url', type: 'text', nullable: true })
  websiteUrl: string | null;

  /**
   * Since when the team must have a second factor (null: not required). A member without one may not act
   * for the organizer from `secondFactorGraceHours` after this, or after joining if they joined later.
   */
  @Column({ name: 'second_factor_required_since', type: 'timestamptz', nullable: true })
  secondFactorRequiredSince: Date | null;

  /** The grace period of that requirement, in hours (0 to 8,760, a year). */
  @Column({ name: 'second_factor_grace_hours', type: 'integer', default: 48 })
  secondFactorGraceHours: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

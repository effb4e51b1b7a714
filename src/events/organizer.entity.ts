import { Check, Column, Unique, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity({ name: 'organizers' })
@Unique('organizers_slug_key', ['slug'])
@Check('organizers_slug_check', `slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 64`)
@Check('organizers_name_check', `length(name) BETWEEN 1 AND 200`)
@Check('organizers_description_check', `length(description) <= 5000`)
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

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

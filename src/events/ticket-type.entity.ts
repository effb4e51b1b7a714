import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { EventEntity } from './event.entity.js';

@Entity({ name: 'ticket_types' })
@Index('ticket_types_event_id_idx', ['eventId', 'createdAt', 'id'])
@Check('ticket_types_name_check', `length(name) BETWEEN 1 AND 100`)
@Check('ticket_types_description_check', `length(description) <= 2000`)
@Check('ticket_types_price_amount_check', `price_amount >= 0`)
@Check('ticket_types_price_currency_check', `price_currency ~ '^[A-Z]{3}$'`)
@Check('ticket_types_quantity_check', `quantity > 0`)
@Check('ticket_types_sold_check', `sold >= 0 AND (quantity IS NULL OR sold <= quantity)`)
@Check('ticket_types_per_order_check', `min_per_order >= 1 AND max_per_order >= min_per_order AND max_per_order <= 20`)
@Check('ticket_types_sales_window_check', `sales_end_at IS NULL OR sales_start_at IS NULL OR sales_end_at > sales_start_at`)
export class TicketTypeEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'event_id', type: 'uuid' })
  eventId: string;

  @ManyToOne(() => EventEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'event_id', foreignKeyConstraintName: 'ticket_types_event_id_fkey' })
  event?: EventEntity;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ name: 'price_amount', type: 'integer' })
  priceAmount: number;

  @Column({ name: 'price_currency', type: 'text' })
  priceCurrency: string;

  @Column({ type: 'integer', nullable: true })
  quantity: number | null;

  @Column({ type: 'integer', default: 0 })
  sold: number;

  @Column({ name: 'sales_start_at', type: 'timestamptz', nullable: true })
  salesStartAt: Date | null;

  @Column({ name: 'sales_end_at', type: 'timestamptz', nullable: true })
  salesEndAt: Date | null;

  @Column({ type: 'boolean', default: false })
  hidden: boolean;

  @Column({ name: 'min_per_order', type: 'integer', default: 1 })
  minPerOrder: number;

  @Column({ name: 'max_per_order', type: 'integer', default: 10 })
  maxPerOrder: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

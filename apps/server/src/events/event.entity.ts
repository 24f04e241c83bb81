import type { EventType } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

/** The transactional outbox: one row per change, written in the change's own transaction. */
@Entity({ name: 'events' })
export class EventRecord {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  @Column({ type: 'varchar', length: 64 })
  type: EventType;

  @Column({ name: 'api_version', type: 'varchar', length: 8 })
  apiVersion: string;

  /** The resource as the API returned it at the time, as JSON text. */
  @Column({ type: 'text' })
  data: string;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  /** Not yet fanned out to webhook endpoints; the dispatcher clears it in the same transaction. */
  @Column({ name: 'fanout_pending', type: 'boolean', default: false })
  fanoutPending: boolean;
}

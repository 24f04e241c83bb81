import type { EventType } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintAsNumber } from '../common/columns';
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

  /**
   * An update event's `previous_attributes` (the changed top-level fields before the change) as
   * JSON text; null for a created, deleted or ping event, and for updates recorded before it was
   * kept.
   */
  @Column({ name: 'previous_attributes', type: 'text', nullable: true })
  previousAttributes: string | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  /**
   * The event's place in its organization's change feed (1, 2, 3, … in commit order), set just
   * before its transaction commits (FeedPositions). Null for an event that is not a change (a
   * webhook endpoint's test `ping`).
   */
  @Column({ type: 'bigint', nullable: true, transformer: bigintAsNumber })
  position: number | null;

  /** Not yet fanned out to webhook endpoints; the dispatcher clears it in the same transaction. */
  @Column({ name: 'fanout_pending', type: 'boolean', default: false })
  fanoutPending: boolean;
}

/** Each organization's last allocated feed position: the row whose lock orders the feed. */
@Entity({ name: 'feed_heads' })
export class FeedHead {
  @PrimaryColumn({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  @Column({ type: 'bigint', transformer: bigintAsNumber })
  position: number;
}

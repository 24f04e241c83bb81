import type { EventType, WebhookDeliveryStatus } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintAsNumber } from '../common/columns';
import { timestampColumn } from '../common/timestamp';

/**
 * One event on its way to one endpoint (a "delivery" in the API). Its id is the `webhook-id`
 * header of every attempt. The row is the whole delivery state, so a restarted server resumes
 * exactly where the last one stopped.
 */
@Entity({ name: 'webhook_messages' })
export class WebhookMessageRecord {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  @Column({ name: 'endpoint_id', type: 'varchar', length: 32 })
  endpointId: string;

  @Column({ name: 'event_id', type: 'varchar', length: 32 })
  eventId: string;

  @Column({ name: 'event_type', type: 'varchar', length: 64 })
  eventType: EventType;

  /**
   * The position of the change delivered to this endpoint before this one (the previous change it
   * subscribes to, since its chain started), fixed when the message is made; null for the first
   * of its chain and for a `ping`. Sent as `previous_position`, the same on every attempt.
   */
  @Column({
    name: 'previous_position',
    type: 'bigint',
    nullable: true,
    transformer: bigintAsNumber,
  })
  previousPosition: number | null;

  @Column({ type: 'varchar', length: 16 })
  status: WebhookDeliveryStatus;

  @Column({ name: 'attempt_count', type: 'integer' })
  attemptCount: number;

  /** Scheduled retries already used; at the schedule's length, a failed attempt is final. */
  @Column({ name: 'retries_used', type: 'integer' })
  retriesUsed: number;

  /**
   * When the next attempt is due. While an attempt is in flight it is pushed past the attempt's
   * timeout (a lease): if the process dies mid-attempt, the message becomes due again by itself.
   */
  @Column({ name: 'next_attempt_at', ...timestampColumn, nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'updated_at', ...timestampColumn })
  updatedAt: Date;
}

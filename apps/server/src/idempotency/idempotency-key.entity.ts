import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

export const IDEMPOTENCY_KEY_STATES = ['in_progress', 'completed'] as const;
export type IdempotencyKeyState = (typeof IDEMPOTENCY_KEY_STATES)[number];

/**
 * One `Idempotency-Key` an organization sent with a POST. The primary key on
 * (organization_id, key) is what makes claiming a key atomic: of two concurrent inserts, the
 * database lets exactly one win. Index on created_at (for the purge) lives in the migration.
 */
@Entity({ name: 'idempotency_keys' })
export class IdempotencyKey {
  @PrimaryColumn({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  /** The client's key as sent (1 to 255 characters). */
  @PrimaryColumn({ type: 'varchar', length: 255 })
  key: string;

  /** SHA-256 (hex) of method, normalised path and canonical JSON body of the first request. */
  @Column({ type: 'varchar', length: 64 })
  fingerprint: string;

  @Column({ type: 'varchar', length: 16 })
  state: IdempotencyKeyState;

  /**
   * Random per claim while in progress: completing or releasing only touches the row if the
   * caller still holds it, so a request whose lease ran out cannot clobber the request that
   * took the key over. Null once completed.
   */
  @Column({ name: 'lock_token', type: 'varchar', length: 36, nullable: true })
  lockToken: string | null;

  /** Until when the in-progress claim is protected; after that another request may take over. */
  @Column({ name: 'locked_until', ...timestampColumn, nullable: true })
  lockedUntil: Date | null;

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus: number | null;

  /** The JSON body exactly as first sent; null for a response without a body. */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;

  /** When the key was (last) claimed; it expires 24 h later. */
  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'completed_at', ...timestampColumn, nullable: true })
  completedAt: Date | null;
}

import type { ExportCollection, ExportFormat, ExportStatus } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

/**
 * One export: what it reads, how far it got, and the feed cursor of its snapshot. Its file lives in
 * `export_chunks` (numbered pieces, read with plain SQL: see export-files.ts).
 */
@Entity({ name: 'exports' })
export class ExportRecord {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  @Column({ type: 'varchar', length: 32 })
  collection: ExportCollection;

  @Column({ type: 'varchar', length: 8 })
  format: ExportFormat;

  /** The list filters as given (JSON text). */
  @Column({ type: 'text' })
  filters: string;

  @Column({ type: 'varchar', length: 16 })
  status: ExportStatus;

  @Column({ name: 'row_count', type: 'integer' })
  rowCount: number;

  @Column({ name: 'size_bytes', type: 'bigint', nullable: true, transformer: bigintNumber() })
  sizeBytes: number | null;

  @Column({ name: 'feed_cursor', type: 'varchar', length: 64, nullable: true })
  cursor: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  error: string | null;

  /** The batch it was started in: a batch's exports run in one snapshot and finish together. */
  @Column({ name: 'batch_id', type: 'varchar', length: 32, nullable: true })
  batchId: string | null;

  /** Until when its runner's claim holds (another takes it over after). */
  @Column({ name: 'lease_until', ...timestampColumn, nullable: true })
  leaseUntil: Date | null;

  /**
   * Which claim runs it, new at every claim: a runner writes only while the token is still its
   * own, so one whose lease lapsed while it was slow cannot finish or fail a takeover's work.
   */
  @Column({ name: 'claim_token', type: 'varchar', length: 32, nullable: true })
  claimToken: string | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'completed_at', ...timestampColumn, nullable: true })
  completedAt: Date | null;

  @Column({ name: 'expires_at', ...timestampColumn, nullable: true })
  expiresAt: Date | null;
}

function bigintNumber() {
  return {
    to: (value: number | null) => value,
    from: (value: string | number | null) => (value === null ? null : Number(value)),
  };
}

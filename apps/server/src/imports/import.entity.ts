import type { ImportCollection, ImportFormat, ImportMode, ImportStatus } from '@platform/contract';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { timestampColumn } from '../common/timestamp';

/** What an import has done so far; `withdrawn` only in `full` mode. */
export interface ImportCounts {
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  withdrawn: number;
  skipped: number;
}

/**
 * One import: its file's rows are staged in `import_rows` (numbered from 1) before the 202, and
 * `next_row` is how far the runner has applied them; the chunk that moves it commits with the
 * rows it applied, so a crash resumes exactly there.
 */
@Entity({ name: 'imports' })
export class ImportRecord {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  @Column({ name: 'organization_id', type: 'varchar', length: 32 })
  organizationId: string;

  /** The member whose token started it, if any: the import stops when they are removed. */
  @Column({ name: 'owner_user_id', type: 'varchar', length: 32, nullable: true })
  ownerUserId: string | null;

  @Column({ type: 'varchar', length: 32 })
  collection: ImportCollection;

  @Column({ type: 'varchar', length: 8 })
  mode: ImportMode;

  @Column({ type: 'varchar', length: 8 })
  format: ImportFormat;

  @Column({ name: 'dry_run', type: 'boolean' })
  dryRun: boolean;

  @Column({ name: 'change_threshold', type: 'double precision' })
  changeThreshold: number;

  @Column({ type: 'boolean' })
  confirmed: boolean;

  /** `receiving` while its file is being read in: never shown, and swept if it never ends. */
  @Column({ type: 'varchar', length: 16 })
  status: ImportStatus | 'receiving';

  /** `upsert`: applying the file's rows; `withdraw`: withdrawing what a `full` file left out. */
  @Column({ type: 'varchar', length: 16 })
  phase: 'upsert' | 'withdraw';

  @Column({ name: 'row_count', type: 'integer' })
  rowCount: number;

  /** The next staged row to apply (from 1); rows before it are applied. */
  @Column({ name: 'next_row', type: 'integer' })
  nextRow: number;

  /** In the `withdraw` phase: the last external id worked through (they go in order). */
  @Column({ name: 'withdrawn_through', type: 'varchar', length: 255, nullable: true })
  withdrawnThrough: string | null;

  @Column({ type: 'integer' })
  created: number;

  @Column({ type: 'integer' })
  updated: number;

  @Column({ type: 'integer' })
  unchanged: number;

  @Column({ type: 'integer' })
  failed: number;

  @Column({ type: 'integer' })
  withdrawn: number;

  /** Rows with no place here (a OneRoster teacher): each a line of the error report. */
  @Column({ type: 'integer' })
  skipped: number;

  /** A OneRoster bundle's imports, comma-separated in the order they run; null for one file. */
  @Column({ type: 'varchar', length: 110, nullable: true })
  bundle: string | null;

  /** The bundle's file this import applies (`users.csv`). */
  @Column({ name: 'source_file', type: 'varchar', length: 64, nullable: true })
  sourceFile: string | null;

  /** The bundle's import that runs before this one: this one waits for it to succeed. */
  @Column({ name: 'after_import_id', type: 'varchar', length: 32, nullable: true })
  afterImportId: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  error: string | null;

  @Column({ name: 'lease_until', ...timestampColumn, nullable: true })
  leaseUntil: Date | null;

  /** The claim running it, new at every claim (as an export's): fences out a lapsed runner. */
  @Column({ name: 'claim_token', type: 'varchar', length: 32, nullable: true })
  claimToken: string | null;

  @Column({ name: 'created_at', ...timestampColumn })
  createdAt: Date;

  @Column({ name: 'completed_at', ...timestampColumn, nullable: true })
  completedAt: Date | null;
}

/** One record of an import's file, as read: the item to apply, or null when it could not be. */
@Entity({ name: 'import_rows' })
export class ImportRowRecord {
  @PrimaryColumn({ name: 'import_id', type: 'varchar', length: 32 })
  importId: string;

  @PrimaryColumn({ name: 'row_number', type: 'integer' })
  rowNumber: number;

  /** Null when the row has none (or none readable): such a row can only fail. */
  @Column({ name: 'external_id', type: 'varchar', length: 255, nullable: true })
  externalId: string | null;

  /** The item as JSON (the collection's batch item); null for a row refused when read. */
  @Column({ type: 'text', nullable: true })
  item: string | null;
}

/** One line of an import's error report. */
@Entity({ name: 'import_errors' })
export class ImportErrorRecord {
  @PrimaryColumn({ name: 'import_id', type: 'varchar', length: 32 })
  importId: string;

  @PrimaryColumn({ name: 'row_number', type: 'integer' })
  rowNumber: number;

  /** Several problems of one row are numbered from 0. */
  @PrimaryColumn({ type: 'integer' })
  seq: number;

  @Column({ name: 'external_id', type: 'varchar', length: 255, nullable: true })
  externalId: string | null;

  @Column({ type: 'varchar', length: 200 })
  field: string;

  @Column({ type: 'varchar', length: 64 })
  code: string;

  @Column({ type: 'varchar', length: 1000 })
  problem: string;
}

import type { TransactionRunner } from '../common/transactions';
import { insertRows } from '../database/write-rows';
import type { ReadRow } from './import-file';
import { ImportErrorRecord, ImportRowRecord } from './import.entity';

/** Staged rows are written this many to a transaction while the file arrives. */
const STAGE_CHUNK = 1000;

/** A row to stage, or (`skipped`) one with no place here: only its report line is kept. */
export type StageRow = ReadRow & { skipped?: true };

export interface Staged {
  /** The last row's number: the file's records, staged or not. */
  rows: number;
  failed: number;
  skipped: number;
}

/**
 * Writes an import's rows into `import_rows` and their problems into `import_errors`, STAGE_CHUNK
 * to a transaction as they are read; `notes` are report lines about the file as a whole.
 */
export async function stageRows(
  transactions: TransactionRunner,
  importId: string,
  reads: AsyncIterable<StageRow>,
  notes: readonly { field: string; problem: string }[] = [],
): Promise<Staged> {
  let rows: ImportRowRecord[] = [];
  // Notes sort before the rows' lines (row 0, negative seq: a full import's withdrawal
  // problems take row 0 from seq 0).
  let errors: ImportErrorRecord[] = notes.map((note, index) => ({
    importId,
    rowNumber: 0,
    seq: index - notes.length,
    externalId: null,
    field: note.field.slice(0, 200),
    code: 'not_mapped',
    problem: note.problem.slice(0, 1000),
  }));
  const staged: Staged = { rows: 0, failed: 0, skipped: 0 };
  const flush = async () => {
    const [r, e] = [rows, errors];
    [rows, errors] = [[], []];
    await transactions.run(async (manager) => {
      await insertRows(manager, ImportRowRecord, r);
      await insertRows(manager, ImportErrorRecord, e);
    });
  };
  for await (const read of reads) {
    staged.rows = read.row;
    if (read.skipped) staged.skipped += 1;
    else {
      rows.push({
        importId,
        rowNumber: read.row,
        externalId: read.externalId,
        item: read.item === null ? null : JSON.stringify(read.item),
      });
      if (read.problems.length > 0) staged.failed += 1;
    }
    errors.push(...problemRecords(importId, read));
    if (rows.length + errors.length >= STAGE_CHUNK) await flush();
  }
  await flush();
  return staged;
}

function problemRecords(importId: string, read: ReadRow): ImportErrorRecord[] {
  return read.problems.map((p, seq) => ({
    importId,
    rowNumber: read.row,
    seq,
    externalId: read.externalId,
    field: p.field.slice(0, 200),
    code: p.code.slice(0, 64),
    problem: p.problem,
  }));
}

import type { BatchItemError, BatchItemStatus, EventType } from '@platform/contract';
import type { z } from 'zod';
import { In, type EntityManager, type FindOptionsWhere, type ObjectLiteral } from 'typeorm';
import { newId } from './ids';
import type { NewRecord, OwnedRecords, ResourceObject } from './owned-records';
import { applyPatch } from './patch';
import { zodErrors } from './problem-details.filter';
import { ProblemException } from './problem.exception';
import { bodyColumns } from './resource-fields';
import { isUniqueViolation } from './resource-errors';

type Owned = ObjectLiteral & {
  id: string;
  organizationId: string;
  externalId: string | null;
  createdAt: Date;
  updatedAt: Date;
};

/** One item of a batch as the contract parsed it: `external_id` and the update body's fields. */
export type BatchItem = { external_id: string } & Record<string, unknown>;

export interface BatchItemResult {
  index: number;
  external_id: string;
  status: BatchItemStatus;
  id: string | null;
  error: BatchItemError | null;
}

export interface BatchResult {
  object: 'batch_result';
  counts: Record<BatchItemStatus, number>;
  data: BatchItemResult[];
}

/** A resource's own rules, the same its create and update apply. */
export interface BatchRules<T extends Owned> {
  /** The new record an item makes: its create body's checks and defaults; throw to refuse it. */
  create(item: BatchItem, index: number): NewRecord<T>;
  /** The rules an updated record must satisfy (a service's `checkUpdate`); throw to refuse it. */
  check(record: T, manager: EntityManager): Promise<void> | void;
}

/** Another batch created one of this batch's new external ids first. */
class RaceLost extends Error {}

const stillRacing = () =>
  new ProblemException(
    'conflict',
    'Other requests kept writing the same external ids at the same time; send the batch again',
  );

/** How often a batch that lost a race for a new external id is run again (it then updates). */
const RACE_ATTEMPTS = 3;
const LOAD_CHUNK = 500;

/**
 * Creates, updates or leaves unchanged one record per item, matched on `external_id`, in one
 * transaction (see packages/contract/src/batch.ts for what the caller is told). An item a rule
 * refuses (a ProblemException) fails alone: its changes are undone and the next item runs.
 * Anything else fails the batch and nothing is written. Two batches creating one external id at
 * once: the loser meets the winner's record (its key check or the unique index) and runs again,
 * now updating it (RACE_ATTEMPTS times at most; then a 409 asks the caller to send it again).
 */
export async function upsertBatch<T extends Owned, R, O extends ResourceObject>(
  records: OwnedRecords<T, R, O>,
  organizationId: string,
  items: readonly BatchItem[],
  rules: BatchRules<T>,
): Promise<BatchResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await records.shared.transactions.run((manager) =>
        runBatch(records, manager, organizationId, items, rules),
      );
    } catch (error) {
      const lost = error instanceof RaceLost || isUniqueViolation(error);
      if (!lost) throw error;
      if (attempt >= RACE_ATTEMPTS) throw stillRacing();
    }
  }
}

async function runBatch<T extends Owned, R, O extends ResourceObject>(
  records: OwnedRecords<T, R, O>,
  manager: EntityManager,
  organizationId: string,
  items: readonly BatchItem[],
  rules: BatchRules<T>,
): Promise<BatchResult> {
  const existing = await loadByExternalId(records, manager, organizationId, items);
  const data: BatchItemResult[] = [];
  for (const [index, item] of items.entries()) {
    const record = existing.get(item.external_id);
    try {
      const [status, id] = record
        ? await updateOne(records, manager, record, item, rules)
        : await createOne(records, manager, organizationId, item, index, rules);
      data.push({ index, external_id: item.external_id, status, id, error: null });
    } catch (error) {
      if (!(error instanceof ProblemException)) throw error;
      const failed = { status: 'failed' as const, id: null, error: itemError(error, index) };
      data.push({ index, external_id: item.external_id, ...failed });
    }
  }
  const counts = { created: 0, updated: 0, unchanged: 0, failed: 0 };
  for (const result of data) counts[result.status] += 1;
  return { object: 'batch_result', counts, data };
}

/** The organization's records holding the items' external ids, locked on PostgreSQL. */
async function loadByExternalId<T extends Owned, R, O extends ResourceObject>(
  records: OwnedRecords<T, R, O>,
  manager: EntityManager,
  organizationId: string,
  items: readonly BatchItem[],
): Promise<Map<string, T>> {
  const found = new Map<string, T>();
  const postgres = records.shared.sql.dialect === 'postgres';
  for (let i = 0; i < items.length; i += LOAD_CHUNK) {
    const keys = items.slice(i, i + LOAD_CHUNK).map((item) => item.external_id);
    const where = { organizationId, externalId: In(keys) } as FindOptionsWhere<T>;
    const rows = await manager.find(records.repo.target, {
      where,
      ...(postgres && { lock: { mode: 'pessimistic_write' as const } }),
    });
    for (const row of rows) found.set(row.externalId!, row);
  }
  return found;
}

async function updateOne<T extends Owned, R, O extends ResourceObject>(
  records: OwnedRecords<T, R, O>,
  manager: EntityManager,
  record: T,
  item: BatchItem,
  rules: BatchRules<T>,
): Promise<[BatchItemStatus, string]> {
  const before = records.toResource(record);
  const changes = bodyColumns<T>(records.updatable, item);
  const kept = { ...record };
  if (!applyPatch(record, changes)) return ['unchanged', record.id];
  try {
    await records.assertKeyFree(manager, record.organizationId, changes, record.id);
    await rules.check(record, manager);
  } catch (error) {
    Object.assign(record, kept);
    throw error;
  }
  record.updatedAt = records.shared.now();
  await manager.save(records.repo.target, record);
  const type = `${records.spec.object}.updated` as EventType;
  await records.recordEvent(manager, record, type, record.updatedAt, before);
  return ['updated', record.id];
}

async function createOne<T extends Owned, R, O extends ResourceObject>(
  records: OwnedRecords<T, R, O>,
  manager: EntityManager,
  organizationId: string,
  item: BatchItem,
  index: number,
  rules: BatchRules<T>,
): Promise<[BatchItemStatus, string]> {
  const fields = rules.create(item, index) as Partial<T>;
  try {
    await records.assertKeyFree(manager, organizationId, fields);
  } catch (error) {
    // A batch that created this external id committed since the load: run again, to update it.
    const where = { organizationId, externalId: item.external_id } as FindOptionsWhere<T>;
    if (await manager.existsBy(records.repo.target, where)) throw new RaceLost();
    throw error;
  }
  const now = records.shared.now();
  const id = newId(records.spec.object, now.getTime());
  const record = { ...fields, id, organizationId, createdAt: now, updatedAt: now } as T;
  await manager.insert(records.repo.target, record);
  await records.recordEvent(manager, record, `${records.spec.object}.created`, now);
  return ['created', id];
}

/** The item's problem, its field paths moved into the batch (`body.items.3.student_number`). */
function itemError(error: ProblemException, index: number): BatchItemError {
  const inItem = (path: string) => path.replace(/^body(\.|$)/, `body.items.${index}$1`);
  return {
    status: error.status,
    code: error.code,
    detail: error.detail,
    errors: (error.options.errors ?? []).map((e) => ({ ...e, path: inItem(e.path) })),
  };
}

/**
 * A new record's body from an item: the resource's create schema, its defaults and required
 * fields, or the item's 400 (`body.items.3.first_name: Required`).
 */
export function createBody<S extends z.ZodTypeAny>(schema: S, item: BatchItem): z.output<S> {
  const parsed = schema.safeParse(item);
  if (parsed.success) return parsed.data as z.output<S>;
  const errors = zodErrors('body', parsed.error);
  const detail = `A new record needs what its create body needs: ${errors.map((e) => e.message).join('; ')}`;
  throw new ProblemException('validation_error', detail, { errors });
}

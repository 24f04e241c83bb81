import type { BatchItemError, BatchItemStatus, EventType } from '@platform/contract';
import type { z } from 'zod';
import { type EntityManager, type FindOptionsWhere, type ObjectLiteral } from 'typeorm';
import { upsertRows } from '../database/write-rows';
import { changedFields } from './changed-fields';
import type { NewEvent } from './event-outbox';
import { newId } from './ids';
import type { NewRecord, OwnedRecords, ResourceObject } from './owned-records';
import { applyPatch } from './patch';
import { zodErrors } from './problem-details.filter';
import { ProblemException } from './problem.exception';
import { bodyColumns } from './resource-fields';
import { isForeignKeyViolation, isUniqueViolation } from './resource-errors';

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
  /**
   * The new record an item makes: its create body's checks, references and defaults; throw to
   * refuse it. `made`: the records this batch has made so far (rules on pairs, such as one exam
   * result per student per exam, see them).
   */
  create(
    item: BatchItem,
    manager: EntityManager,
    made: readonly T[],
    at: Date,
  ): Promise<NewRecord<T>> | NewRecord<T>;
  /** The rules an updated record must satisfy (a service's `checkUpdate`); throw to refuse it. */
  check(record: T, manager: EntityManager): Promise<void> | void;
  /**
   * Refuses an item for an existing record whose create-only references (`batchSchemas`'
   * `createFields`) name something other than the record has.
   */
  fixed?(record: T, item: BatchItem, manager: EntityManager): Promise<void>;
  /**
   * Moves a record to the state an item names (an enrollment's or a payment's `status`) along the
   * resource's state machine: an existing record after the item's fields, a new one after its
   * create. Calls `moved` with each transition's event type once the record has taken it (a
   * payment recorded as refunded: `payment.succeeded`, then `payment.refunded`); calls nothing
   * when the record is in that state already. Throw to refuse the item.
   */
  transition?(
    record: T,
    item: BatchItem,
    manager: EntityManager,
    at: Date,
    moved: (type: EventType) => void,
  ): Promise<void> | void;
}

/**
 * A batch's rules, made afresh for each run of the batch (a lost race runs it again), so rules
 * that count across items (an enrollment's seats) start from the database each time.
 */
export type BatchRulesFactory<T extends Owned> = (
  manager: EntityManager,
  items: readonly BatchItem[],
  existing: ReadonlyMap<string, T>,
) => Promise<BatchRules<T>> | BatchRules<T>;

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
 * A record an item refers to that another request deleted before the commit (a foreign key
 * violation) runs the batch again too, where that item now fails with the reference's 400.
 */
export async function upsertBatch<T extends Owned, R, O extends ResourceObject>(
  records: OwnedRecords<T, R, O>,
  organizationId: string,
  items: readonly BatchItem[],
  rules: BatchRules<T> | BatchRulesFactory<T>,
): Promise<BatchResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await records.shared.transactions.run((manager) =>
        runBatch(records, manager, organizationId, items, rules),
      );
    } catch (error) {
      const lost =
        error instanceof RaceLost || isUniqueViolation(error) || isForeignKeyViolation(error);
      if (!lost) throw error;
      if (attempt >= RACE_ATTEMPTS) throw stillRacing();
    }
  }
}

/** What a batch will write once every item is judged: rows, updates and events, in item order. */
interface Plan<T> {
  now: Date;
  inserts: T[];
  /** Records to write back whole (changed in place), and every property any of them changed. */
  updates: T[];
  updated: Set<string>;
  events: NewEvent[];
  /** Per unique key (`student_number`, `external_id`): each value's holder, as the batch goes. */
  holders: Map<string, Map<unknown, string>>;
}

async function runBatch<T extends Owned, R, O extends ResourceObject>(
  records: OwnedRecords<T, R, O>,
  manager: EntityManager,
  organizationId: string,
  items: readonly BatchItem[],
  rulesOrFactory: BatchRules<T> | BatchRulesFactory<T>,
): Promise<BatchResult> {
  const existing = await loadByExternalId(records, manager, organizationId, items);
  const rules =
    typeof rulesOrFactory === 'function'
      ? await rulesOrFactory(manager, items, existing)
      : rulesOrFactory;
  const plan: Plan<T> = {
    now: records.shared.now(),
    inserts: [],
    updates: [],
    updated: new Set(['updatedAt']),
    events: [],
    holders: await keyHolders(records, manager, organizationId, items, existing),
  };
  const data: BatchItemResult[] = [];
  for (const [index, item] of items.entries()) {
    const record = existing.get(item.external_id);
    try {
      const [status, id] = record
        ? await planUpdate(records, manager, plan, record, item, rules)
        : await planCreate(records, manager, plan, organizationId, item, rules);
      data.push({ index, external_id: item.external_id, status, id, error: null });
    } catch (error) {
      if (!(error instanceof ProblemException)) throw error;
      const failed = { status: 'failed' as const, id: null, error: itemError(error, index) };
      data.push({ index, external_id: item.external_id, ...failed });
    }
  }
  await write(records, manager, organizationId, plan);
  const counts = { created: 0, updated: 0, unchanged: 0, failed: 0 };
  for (const result of data) counts[result.status] += 1;
  return { object: 'batch_result', counts, data };
}

/**
 * The organization's records holding the items' external ids, locked on PostgreSQL. One array
 * parameter per chunk: `find` with `In(keys)` spent longer naming 500 parameters than the read.
 */
async function loadByExternalId<T extends Owned, R, O extends ResourceObject>(
  records: OwnedRecords<T, R, O>,
  manager: EntityManager,
  organizationId: string,
  items: readonly BatchItem[],
): Promise<Map<string, T>> {
  const found = new Map<string, T>();
  const postgres = records.shared.sql.dialect === 'postgres';
  for (const keys of chunks(items.map((item) => item.external_id))) {
    const query = manager
      .createQueryBuilder<T>(records.repo.target, 'record')
      .where('record.organizationId = :organizationId AND record.externalId IN (:...keys)', {
        organizationId,
        keys,
      });
    if (postgres) query.setLock('pessimistic_write');
    for (const row of await query.getMany()) found.set(row.externalId!, row);
  }
  return found;
}

/**
 * Who holds each value of a unique key that an item sends: one read per key, not per item; the
 * external ids' holders are the records already loaded by them.
 */
async function keyHolders<T extends Owned, R, O extends ResourceObject>(
  records: OwnedRecords<T, R, O>,
  manager: EntityManager,
  organizationId: string,
  items: readonly BatchItem[],
  byExternalId: ReadonlyMap<string, T>,
): Promise<Map<string, Map<unknown, string>>> {
  const holders = new Map<string, Map<unknown, string>>();
  const { sql } = records.shared;
  const target = records.repo.target;
  for (const { field, property } of records.uniqueKeys) {
    const held = new Map<unknown, string>();
    holders.set(field, held);
    if (field === 'external_id') {
      for (const [externalId, record] of byExternalId) held.set(externalId, record.id);
      continue;
    }
    const column = sql.column(target, String(property));
    const read = `SELECT ${sql.column(target, 'id')} AS id, ${column} AS value FROM ${sql.table(target)}
      WHERE ${sql.column(target, 'organizationId')} = :organizationId AND ${column} IN (:...values)`;
    const values = [...new Set(items.map((item) => item[field]).filter((v) => v != null))];
    for (const chunk of chunks(values)) {
      const rows = await sql.query<{ id: string; value: unknown }>(manager, read, {
        organizationId,
        values: chunk,
      });
      for (const row of rows) held.set(row.value, row.id);
    }
  }
  return holders;
}

/**
 * Refuses a unique key value another record holds (409 naming the field), then moves the keys
 * `fields` sets to `id`.
 */
function claimKeys<T extends Owned, R, O extends ResourceObject>(
  records: OwnedRecords<T, R, O>,
  plan: Plan<T>,
  id: string,
  fields: Partial<T>,
  was?: T,
): void {
  const changing = records.uniqueKeys.filter((k) => fields[k.property] != null);
  for (const key of changing) {
    const holder = plan.holders.get(key.field)!.get(fields[key.property]);
    if (holder !== undefined && holder !== id) throw records.keyTaken(key, fields);
  }
  for (const key of changing) {
    const held = plan.holders.get(key.field)!;
    if (was && held.get(was[key.property]) === id) held.delete(was[key.property]);
    held.set(fields[key.property], id);
  }
}

async function planUpdate<T extends Owned, R, O extends ResourceObject>(
  records: OwnedRecords<T, R, O>,
  manager: EntityManager,
  plan: Plan<T>,
  record: T,
  item: BatchItem,
  rules: BatchRules<T>,
): Promise<[BatchItemStatus, string]> {
  const before = records.toResource(record);
  const changes = bodyColumns<T>(records.updatable, item);
  const kept = { ...record };
  await rules.fixed?.(record, item, manager);
  // The fields' change first (`<object>.updated`), then each state's (`enrollment.dropped`).
  const steps: Step<R>[] = [];
  const moved = (type: EventType) => steps.push([type, records.toResource(record)]);
  try {
    if (applyPatch(record, changes)) {
      record.updatedAt = plan.now;
      moved(`${records.spec.object}.updated` as EventType);
    }
    await rules.transition?.(record, item, manager, plan.now, moved);
    if (steps.length === 0) return ['unchanged', record.id];
    await rules.check(record, manager);
    claimKeys(records, plan, record.id, changes, kept);
  } catch (error) {
    Object.assign(record, kept);
    throw error;
  }
  record.updatedAt = plan.now;
  plan.updates.push(record);
  for (const property of Object.keys(record))
    if (record[property] !== kept[property]) plan.updated.add(property);
  planEvents(plan, before, steps);
  return ['updated', record.id];
}

/** An event a record's item makes: its type, and the record as that step left it. */
type Step<R> = [EventType, R];

/** The steps' events, each with the fields it changed since the one before (or `before`). */
function planEvents<T, R>(plan: Plan<T>, before: R | undefined, steps: readonly Step<R>[]): void {
  let previous = before;
  for (const [type, data] of steps) {
    const previousAttributes = previous && changedFields(previous, data as Record<string, unknown>);
    plan.events.push({
      type,
      data,
      at: plan.now,
      ...(previousAttributes && { previousAttributes }),
    });
    previous = data;
  }
}

async function planCreate<T extends Owned, R, O extends ResourceObject>(
  records: OwnedRecords<T, R, O>,
  manager: EntityManager,
  plan: Plan<T>,
  organizationId: string,
  item: BatchItem,
  rules: BatchRules<T>,
): Promise<[BatchItemStatus, string]> {
  const fields = (await rules.create(item, manager, plan.inserts, plan.now)) as Partial<T>;
  const now = plan.now;
  const id = newId(records.spec.object, now.getTime());
  const record = { ...fields, id, organizationId, createdAt: now, updatedAt: now } as T;
  const steps: Step<R>[] = [];
  const moved = (type: EventType) => steps.push([type, records.toResource(record)]);
  moved(`${records.spec.object}.created` as EventType);
  await rules.transition?.(record, item, manager, now, moved);
  try {
    claimKeys(records, plan, id, fields);
  } catch (error) {
    // A batch that created this external id committed since the load: run again, to update it.
    const where = { organizationId, externalId: item.external_id } as FindOptionsWhere<T>;
    if (await manager.existsBy(records.repo.target, where)) throw new RaceLost();
    throw error;
  }
  plan.inserts.push(record);
  planEvents(plan, undefined, steps);
  return ['created', id];
}

/**
 * The plan's updated rows, then its new ones, in multi-row statements; its events in order.
 * Updates first: a new row may take what an update gave up (a live enrollment's place under the
 * partial unique index, a `student_number`). Both in one pass: on SQLite a thousand-row batch
 * is one statement instead of four (bench/README.md, goal 10).
 */
async function write<T extends Owned, R, O extends ResourceObject>(
  records: OwnedRecords<T, R, O>,
  manager: EntityManager,
  organizationId: string,
  plan: Plan<T>,
): Promise<void> {
  const target = records.repo.target;
  await upsertRows(manager, target, [...plan.updates, ...plan.inserts], [...plan.updated]);
  await records.shared.events.recordMany(manager, organizationId, plan.events);
}

function chunks<V>(values: readonly V[]): V[][] {
  const out: V[][] = [];
  for (let i = 0; i < values.length; i += LOAD_CHUNK) out.push(values.slice(i, i + LOAD_CHUNK));
  return out;
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

/**
 * 409 for an item whose create-only reference (`createFields` in `batchSchemas`) names another
 * record than the one its record has: a batch does not move an exam to another course.
 */
export function fixedField(field: string, noun: string, current: string): ProblemException {
  const message = `cannot change: this record's ${noun} is ${current}`;
  return new ProblemException('conflict', `${field} ${message}`, {
    errors: [{ path: `body.${field}`, message, code: 'immutable' }],
  });
}

import type { z } from 'zod';
import { Clock } from './clock';
import { Inject, Injectable } from '@nestjs/common';
import type { DeleteRefusal, EventData, EventType, IdKind, ListQuery } from '@platform/contract';
import {
  type EntityManager,
  type FindOptionsWhere,
  Not,
  type ObjectLiteral,
  type Repository,
} from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Sql } from '../database/sql';
import { changedFields } from './changed-fields';
import {
  type CheckedReference,
  collectReferences,
  noteReference,
  vanishedReference,
} from './checked-references';
import { EventOutbox } from './event-outbox';
import { externalIdOf, findOwned, findOwnedByExternalId, findOwnedForUpdate } from './find-owned';
import { type ListOptions, ListCollection } from './list/find-page';
import { pageEnvelope, type PageUrl } from './list/page-envelope';
import { applyPatch } from './patch';
import {
  bodyColumns,
  fieldProperties,
  propertyOf,
  resourceMapper,
  rowMapper,
} from './resource-fields';
import { newId } from './ids';
import {
  isForeignKeyViolation,
  alreadyExists,
  isUniqueViolation,
  stillReferenced,
  unknownReference,
} from './resource-errors';
import { TransactionRunner } from './transactions';

type Owned = ObjectLiteral & {
  id: string;
  organizationId: string;
  createdAt: Date;
  updatedAt: Date;
};

/** What a service's `create` builds: the record less what OwnedRecords stamps on it. */
export type NewRecord<T extends Owned> = Omit<
  T,
  'id' | 'organizationId' | 'createdAt' | 'updatedAt'
>;

/** A resource's `object`, which names its events (`<object>.created`, `<object>.updated`, …). */
type ObjectOf<E> = E extends `${infer O}.${string}` ? O : never;
export type ResourceObject = ObjectOf<EventType> & IdKind;
type EventOf<O extends string> = Extract<EventType, `${O}.${string}`>;
/** Whoever acts for an organization: every read and write is scoped to it. */
export type Caller = { organizationId: string };

export interface OwnedResourceSpec<O extends ResourceObject> {
  object: O;
  /** The resource's name in a 404's detail ("No exam result with id …"); `object` otherwise. */
  noun?: string;
  /**
   * The contract's resource schema: the API view is derived from it (`resourceMapper`), each
   * field read from the entity column of the same name.
   */
  resource: z.AnyZodObject;
  /** The contract's update body, where there is a PATCH: each field writes its column. */
  update?: z.AnyZodObject;
  /** The contract's list query: it names the list's filter, sort and search columns. */
  listQuery: object;
  /**
   * A business key unique within the organization (a student's `student_number`, a course's
   * `code`): a create or update that takes one in use is a 409 naming the field.
   */
  uniqueKey?: string;
}

/** What a write may turn a unique-index violation into (the 409 naming the taken value). */
export interface WriteRules {
  /** Given the violation, whose text names the index or its columns. */
  conflict?: (error?: unknown) => Error | undefined;
}

export interface UpdateRules<T> extends WriteRules {
  /** The domain rules on the patched record, before it is saved; throw to refuse the change. */
  check?: (record: T, manager: EntityManager) => Promise<void> | void;
}

/**
 * The 409 of a delete that a foreign key refuses: who still refers, and what to do instead. The
 * contract declares it with the delete route (`DeleteRefusal`), which documents it from there.
 */
export type DeleteRules = DeleteRefusal;

/**
 * Builds each domain service's `OwnedRecords` with the shared parts (connection, outbox, list
 * search budget, clock), so a service injects only its repository and the services it asks.
 */
@Injectable()
export class OwnedRecordsFactory {
  /** The injected clock, read for created_at, updated_at and their events' times. */
  readonly now = (): Date => this.clock.now();
  /** How long a list's `q` search may take (`SEARCH_TIMEOUT`). */
  readonly listOptions: ListOptions;

  constructor(
    readonly sql: Sql,
    readonly transactions: TransactionRunner,
    readonly events: EventOutbox,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.listOptions = { searchTimeoutMs: config.searchTimeoutMs };
  }

  for<T extends Owned, R, O extends ResourceObject>(
    repo: Repository<T>,
    spec: OwnedResourceSpec<O>,
  ): OwnedRecords<T, R, O> {
    return new OwnedRecords(this, repo, spec);
  }
}

/**
 * One resource's records of an organization, as every domain service reads and writes them: the
 * list page, one by id (404 for another organization's), and each write in one transaction with
 * its event (outbox). The services keep only their rules: what a new record is, what an update
 * must satisfy, which state change applies.
 */
export class OwnedRecords<T extends Owned, R, O extends ResourceObject> {
  private readonly listed: ListCollection<T>;
  readonly noun: string;
  /** The record's API view, derived from the contract's resource schema. */
  readonly toResource: (record: T) => R;
  /** A raw row's API view, the same as toResource's of its entity (a list page builds none). */
  private readonly rowToResource: (row: Record<string, unknown>) => R;
  readonly updatable: ReturnType<typeof fieldProperties>;
  /** fromBody's field lists, derived once per create schema. */
  private readonly createFields = new WeakMap<z.AnyZodObject, ReturnType<typeof fieldProperties>>();
  /** `spec.uniqueKey`, then `external_id` where the entity has that column. */
  readonly uniqueKeys: { field: string; property: keyof T }[];
  /** Whether the entity has `external_id`, so `ext:<external_id>` names a record. */
  readonly hasExternalIds: boolean;

  constructor(
    readonly shared: OwnedRecordsFactory,
    readonly repo: Repository<T>,
    readonly spec: OwnedResourceSpec<O>,
  ) {
    this.noun = spec.noun ?? spec.object;
    this.listed = ListCollection.of(this.shared.sql, repo, spec.listQuery);
    this.toResource = resourceMapper(repo.metadata, spec.resource);
    this.rowToResource = rowMapper(repo.metadata, repo.manager.connection.driver, spec.resource);
    this.updatable = spec.update ? fieldProperties(repo.metadata, spec.update) : [];
    this.hasExternalIds = repo.metadata.findColumnWithPropertyName('externalId') !== undefined;
    this.uniqueKeys = [spec.uniqueKey, this.hasExternalIds && 'external_id']
      .filter((field): field is string => typeof field === 'string')
      .map((field) => ({ field, property: propertyOf(repo.metadata, field) }));
  }

  async list(organizationId: string, query: ListQuery, url: PageUrl) {
    const { listOptions } = this.shared;
    const { rows, total } = await this.listed.find(
      organizationId,
      query,
      listOptions,
      this.rowToResource,
    );
    return { data: rows, ...pageEnvelope(url, query, total) };
  }

  async retrieve(organizationId: string, id: string): Promise<R> {
    return this.toResource(await this.find(this.repo.manager, organizationId, id));
  }

  /** The record a path id names: its id, or `ext:<external_id>` where the resource has those. */
  find(manager: EntityManager, organizationId: string, id: string, forUpdate = false): Promise<T> {
    const externalId = this.externalIdIn(id);
    if (externalId !== undefined) {
      const key = { organizationId, externalId, id, noun: this.noun };
      const { sql } = this.shared;
      return findOwnedByExternalId(sql, manager, this.repo.target, key, forUpdate);
    }
    if (!forUpdate) return findOwned(manager, this.repo.target, organizationId, id, this.noun);
    const { sql } = this.shared;
    return findOwnedForUpdate(sql, manager, this.repo.target, organizationId, id, this.noun);
  }

  /**
   * The record a request body names in `field` (`student_id`: an id, or `ext:<external_id>`
   * where the resource has those), inside the transaction: another organization's, or none, is a
   * 400 naming the field.
   */
  async referenced(
    manager: EntityManager,
    organizationId: string,
    field: string,
    id: string,
  ): Promise<T> {
    const externalId = this.externalIdIn(id);
    const key = externalId === undefined ? { id } : { externalId };
    const where = { ...key, organizationId } as FindOptionsWhere<T>;
    const record = await manager.findOneBy(this.repo.target, where);
    if (!record) throw unknownReference(field, this.noun, id);
    const exists = (reader: EntityManager) => reader.existsBy(this.repo.target, where);
    noteReference(manager, { field, noun: this.noun, id, exists });
    return record;
  }

  /** The external id an `ext:` id names, where the resource has external ids. */
  private externalIdIn(id: string): string | undefined {
    return this.hasExternalIds ? externalIdOf(id) : undefined;
  }

  /** The record locked until the transaction ends (PostgreSQL), for a change that reads it first. */
  findForUpdate(manager: EntityManager, organizationId: string, id: string): Promise<T> {
    return this.find(manager, organizationId, id, true);
  }

  /**
   * Inserts the record `build` makes (after its checks), with its new id, organization and
   * creation time stamped here, and records `<object>.created`. A record `build` checked
   * (`referenced`) and another request deleted before the insert is the same 400 as one never
   * there (see checked-references.ts).
   */
  create(
    organizationId: string,
    build: (manager: EntityManager, now: Date) => Promise<NewRecord<T>> | NewRecord<T>,
    rules: WriteRules = {},
  ): Promise<R> {
    let fields: Partial<T> = {};
    let references: CheckedReference[] = [];
    return this.write(
      { ...this.withKeyConflict(rules, () => fields), references: () => references },
      async (manager) => {
        references = collectReferences(manager);
        const now = this.shared.now();
        fields = (await build(manager, now)) as Partial<T>;
        await this.assertKeyFree(manager, organizationId, fields);
        const stamps = {
          id: newId(this.spec.object, now.getTime()),
          organizationId,
          createdAt: now,
        };
        const record = { ...fields, ...stamps, updatedAt: now } as T;
        await manager.insert(this.repo.target, record);
        return this.recordEvent(manager, record, `${this.spec.object}.created`, record.createdAt);
      },
    );
  }

  /**
   * Applies a partial update to the locked record: a patch that changes nothing writes nothing
   * and sends no event; otherwise `check` judges the result, then it is saved with
   * `<object>.updated`, whose `previous_attributes` are the fields it changed, as they were.
   */
  update(organizationId: string, id: string, body: object, rules: UpdateRules<T> = {}): Promise<R> {
    const changes = bodyColumns<T>(this.updatable, body);
    return this.write(
      this.withKeyConflict(rules, () => changes),
      async (manager) => {
        const record = await this.findForUpdate(manager, organizationId, id);
        const before = this.toResource(record);
        if (!applyPatch(record, changes)) return before;
        await this.assertKeyFree(manager, organizationId, changes, record.id);
        await rules.check?.(record, manager);
        record.updatedAt = this.shared.now();
        await manager.save(this.repo.target, record);
        const type = `${this.spec.object}.updated`;
        return this.recordEvent(manager, record, type, record.updatedAt, before);
      },
    );
  }

  /**
   * One state change of the locked record: `apply` checks the current state and moves it
   * (stamping `updatedAt` with `now`); saved with its `event`, whose `previous_attributes` are
   * the fields `apply` changed, as they were.
   */
  change(
    organizationId: string,
    id: string,
    event: EventOf<O>,
    apply: (record: T, now: Date) => void,
  ): Promise<R> {
    return this.shared.transactions.run(async (manager) => {
      const record = await this.findForUpdate(manager, organizationId, id);
      const before = this.toResource(record);
      apply(record, this.shared.now());
      await manager.save(this.repo.target, record);
      return this.recordEvent(manager, record, event, record.updatedAt, before);
    });
  }

  /**
   * Deletes the record with its `<object>.deleted` event in one transaction. The database's
   * foreign keys decide whether others still refer to it, so there is no check-then-delete
   * race; a violation becomes a 409 that says what to do instead.
   */
  async delete(
    organizationId: string,
    id: string,
    rules: DeleteRules,
  ): Promise<{ id: string; object: O; deleted: true }> {
    const object: string = this.spec.object;
    try {
      return await this.shared.transactions.run(async (manager) => {
        const { id: recordId } = await this.find(manager, organizationId, id);
        await manager.delete(this.repo.target, { id: recordId, organizationId });
        const deleted = { id: recordId, object: this.spec.object, deleted: true as const };
        const at = this.shared.now();
        await this.recordEventData(manager, organizationId, `${object}.deleted`, deleted, at);
        return deleted;
      });
    } catch (error) {
      if (isForeignKeyViolation(error)) {
        const noun = object.charAt(0).toUpperCase() + object.slice(1);
        throw stillReferenced(noun, id, rules.referencedBy, rules.instead);
      }
      throw error;
    }
  }

  /**
   * A create body's fields under their entity names, an absent optional one as null: for the
   * resources whose new record is their create body (students, courses).
   */
  fromBody(body: object, schema: z.AnyZodObject): NewRecord<T> {
    let fields = this.createFields.get(schema);
    if (!fields)
      this.createFields.set(schema, (fields = fieldProperties(this.repo.metadata, schema)));
    return bodyColumns<T>(fields, body, null) as NewRecord<T>;
  }

  /** Refuses a unique key (`uniqueKeys`) that another record of the organization holds. */
  async assertKeyFree(
    manager: EntityManager,
    organizationId: string,
    fields: Partial<T>,
    self?: string,
  ): Promise<void> {
    for (const key of this.uniqueKeys) {
      // A null external id is no key: any number of records have none.
      if (fields[key.property] === undefined || fields[key.property] === null) continue;
      const where = {
        organizationId,
        [key.property]: fields[key.property],
        ...(self !== undefined && { id: Not(self) }),
      } as FindOptionsWhere<T>;
      if (await manager.existsBy(this.repo.target, where)) throw this.keyTaken(key, fields);
    }
  }

  /** The 409 for a taken unique key: from the check, or from the index when a race beat it. */
  keyTaken(key: { field: string; property: keyof T }, fields: Partial<T>): Error {
    const value = String(fields[key.property]);
    return alreadyExists(key.field, `A ${this.noun} with ${key.field} '${value}' already exists`);
  }

  /**
   * The rules with a unique key's 409 as the conflict, when the write sets one: the key whose
   * column or index the violation names (SQLite names the columns, PostgreSQL the index). A
   * violation naming none of them is the write's own conflict where it has one (an enrollment's
   * live-enrollment index).
   */
  private withKeyConflict<W extends WriteRules>(rules: W, written: () => Partial<T>): W {
    if (this.uniqueKeys.length === 0) return rules;
    const own = rules.conflict;
    const conflict = (error?: unknown) => {
      const fields = written();
      const set = this.uniqueKeys.filter((k) => fields[k.property] != null);
      const named = set.find((k) => String((error as Error)?.message).includes(k.field));
      if (own && !named) return own(error);
      const key = named ?? set[0];
      return key && this.keyTaken(key, fields);
    };
    return { ...rules, conflict };
  }

  /**
   * A write in one transaction; the unique indexes still guard a race its checks leave open (the
   * business key's check is `assertKeyFree`, so its violation is that same 409), and so do the
   * foreign keys (a referenced record deleted after its check: that reference's 400).
   */
  private async write(
    rules: WriteRules & { references?: () => readonly CheckedReference[] },
    work: (manager: EntityManager) => Promise<R>,
  ) {
    try {
      return await this.shared.transactions.run(work);
    } catch (error) {
      const conflict = isUniqueViolation(error) ? rules.conflict?.(error) : undefined;
      const { transactions } = this.shared;
      const table = this.repo.metadata.tableName;
      const gone =
        rules.references &&
        (await vanishedReference(error, table, rules.references(), transactions.manager));
      throw conflict ?? gone ?? error;
    }
  }

  /**
   * Records the record's event; with the resource as it was `before` the change (the view of the
   * record the write loaded, so no extra read), its `previous_attributes`.
   */
  async recordEvent(manager: EntityManager, record: T, type: string, at: Date, before?: R) {
    const resource = this.toResource(record);
    const previousAttributes =
      before === undefined
        ? undefined
        : changedFields(before as Record<string, unknown>, resource as Record<string, unknown>);
    await this.recordEventData(
      manager,
      record.organizationId,
      type,
      resource,
      at,
      previousAttributes,
    );
    return resource;
  }

  private async recordEventData(
    manager: EntityManager,
    organizationId: string,
    type: string,
    data: unknown,
    at: Date,
    previousAttributes?: Record<string, unknown>,
  ): Promise<void> {
    // TypeScript cannot pair a type built from `object` with its data; the catalogue has each.
    await this.shared.events.record(
      manager,
      organizationId,
      type as EventType,
      data as EventData<EventType>,
      at,
      { previousAttributes },
    );
  }
}

/**
 * The read side every domain service serves the same way (list, retrieve, and the lookup other
 * services use for references in request bodies); subclasses add the writes with their rules.
 */
export abstract class OwnedResourceService<T extends Owned, R, O extends ResourceObject> {
  protected constructor(protected readonly records: OwnedRecords<T, R, O>) {}

  list(caller: Caller, query: ListQuery, url: PageUrl) {
    return this.records.list(caller.organizationId, query, url);
  }

  retrieve(caller: Caller, id: string): Promise<R> {
    return this.records.retrieve(caller.organizationId, id);
  }

  /**
   * The record a request body names in its `field` (`student_id`), or a 400 naming that field
   * (see OwnedRecords): the field and the id it holds are read from the one body.
   */
  referenced<F extends string>(
    manager: EntityManager,
    caller: Caller,
    body: Readonly<Record<F, string>>,
    field: F,
  ): Promise<T> {
    return this.records.referenced(manager, caller.organizationId, field, body[field]);
  }
}

/**
 * A resource with a PATCH: the body's fields (the spec's `update` schema) write their columns,
 * and `checkUpdate` holds the resource's own rules on the patched record.
 */
export abstract class PatchableResourceService<
  T extends Owned,
  R,
  O extends ResourceObject,
> extends OwnedResourceService<T, R, O> {
  update(caller: Caller, id: string, input: object): Promise<R> {
    return this.records.update(caller.organizationId, id, input, {
      check: (record, manager) => this.checkUpdate(record, manager, caller),
    });
  }

  /** The rules a patched record must satisfy before it is saved; throw to refuse the change. */
  protected checkUpdate(
    _record: T,
    _manager: EntityManager,
    _caller: Caller,
  ): Promise<void> | void {}
}

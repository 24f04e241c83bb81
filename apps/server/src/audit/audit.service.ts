import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  type AuditAction,
  type AuditEventResource,
  type AuditTargetType,
  contract,
  type ListQuery,
} from '@platform/contract';
import {
  type EntityManager,
  type EntityTarget,
  LessThan,
  type ObjectLiteral,
  type Repository,
} from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Clock } from '../common/clock';
import { newId, publicId } from '../common/ids';
import { Sql } from '../database/sql';
import { ListCollection } from '../common/list/find-page';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import { notFound } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import type { AuditActor } from './audit-actor';
import { AuditEventRecord } from './audit-event.entity';

export interface AuditEntry {
  action: AuditAction;
  targetType: AuditTargetType;
  targetId: string;
  /** What changed; never a secret (no token, client secret or signing secret). */
  changes?: Record<string, unknown>;
  /** Needed for an operator; an API actor's organization is its own. */
  organizationId?: string;
}

const DAY_MS = 86_400_000;

export function toAuditEventResource(record: AuditEventRecord): AuditEventResource {
  return {
    id: publicId('audit_event', record.id),
    object: 'audit_event',
    action: record.action as AuditAction,
    actor: {
      type: record.actorType,
      credential_id: record.credentialId,
      user_id: publicId('user', record.userId),
      ip: record.ip,
    },
    target: { type: record.targetType as AuditTargetType, id: record.targetId },
    changes:
      record.changes === null ? null : (JSON.parse(record.changes) as Record<string, unknown>),
    created_at: toIso(record.createdAt),
  };
}

@Injectable()
export class AuditService {
  private readonly listed: ListCollection<AuditEventRecord>;

  constructor(
    @InjectRepository(AuditEventRecord) private readonly events: Repository<AuditEventRecord>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    sql: Sql,
    private readonly clock: Clock,
    private readonly transactions: TransactionRunner,
  ) {
    // Audit events never change, so `updated_at` (and `updated_since`) is `created_at`.
    this.listed = ListCollection.of(sql, events, contract.auditEvents.list.query, {
      updated_at: 'created_at',
    });
  }

  /**
   * Records a change. Pass the change's transaction (`manager`) so the entry exists if and only
   * if the change committed; without one it is written on its own.
   */
  async record(actor: AuditActor, entry: AuditEntry, manager?: EntityManager): Promise<void> {
    const organizationId = actor.kind === 'operator' ? entry.organizationId : actor.organizationId;
    if (!organizationId) throw new Error('an operator audit entry needs its organizationId');
    const now = this.clock.now();
    const record: AuditEventRecord = {
      id: newId('audit_event', now.getTime()),
      organizationId,
      actorType: actor.kind,
      credentialId: actor.kind === 'operator' ? null : actor.credentialId,
      userId: actor.kind === 'operator' ? null : actor.userId,
      action: entry.action,
      targetType: entry.targetType,
      targetId: entry.targetId,
      changes: entry.changes ? JSON.stringify(entry.changes) : null,
      ip: actor.kind === 'operator' ? null : actor.ip,
      createdAt: now,
    };
    // On its own: queued as every write is (on SQLite, a statement outside the queue would run
    // inside whichever transaction is open on the one connection, and go with its rollback).
    if (manager) await manager.insert(AuditEventRecord, record);
    else await this.transactions.run((own) => own.insert(AuditEventRecord, record));
  }

  /** Inserts a new row and the entry that records its creation, in one transaction. */
  async insertAudited<T extends ObjectLiteral>(
    entity: EntityTarget<T>,
    row: T,
    actor: AuditActor,
    entry: AuditEntry,
    also?: (manager: EntityManager) => Promise<void>,
  ): Promise<void> {
    await this.transactions.run(async (manager) => {
      await manager.insert(entity, row);
      await this.record(actor, entry, manager);
      await also?.(manager);
    });
  }

  async list(organizationId: string, query: ListQuery, url: PageUrl) {
    const { rows, total } = await this.listed.find(organizationId, {
      ...query,
      conditions: [...query.conditions, this.retainedCondition()],
    });
    return { data: rows.map(toAuditEventResource), ...pageEnvelope(url, query, total) };
  }

  async retrieve(organizationId: string, id: string): Promise<AuditEventResource> {
    const record = await this.events.findOneBy({ id, organizationId });
    if (!record || record.createdAt < this.cutoff()) throw notFound('audit event', id);
    return toAuditEventResource(record);
  }

  /** Deletes entries older than the retention (`AUDIT_RETENTION_DAYS`); returns how many. */
  async prune(now = this.clock.now()): Promise<number> {
    const result = await this.events.delete({ createdAt: LessThan(this.cutoff(now)) });
    return result.affected ?? 0;
  }

  /** Entries older than this are past retention: hidden at once, deleted by the next prune. */
  private cutoff(now = this.clock.now()): Date {
    return new Date(now.getTime() - this.config.audit.retentionDays * DAY_MS);
  }

  private retainedCondition() {
    return { field: 'created_at', op: 'gte' as const, value: this.cutoff() };
  }
}

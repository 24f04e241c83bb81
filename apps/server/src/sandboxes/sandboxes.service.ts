import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type Sandbox, type SandboxCreateSchema, SANDBOX_LIMIT } from '@platform/contract';
import type { Repository } from 'typeorm';
import type { z } from 'zod';
import { AuditService } from '../audit/audit.service';
import type { ApiAuditActor } from '../audit/audit-actor';
import { Clock } from '../common/clock';
import type { ListQuery } from '@platform/contract';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import type { Principal } from '../common/principal';
import { ProblemException } from '../common/problem.exception';
import { notFound } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { ambientTransaction } from '../database/ambient-transaction';
import { Sql } from '../database/sql';
import { bulkLoadStatements, LIST_TALLIES } from '../database/list-tallies';
import { UserRecord } from '../oauth/entities';
import { dropAccountsWithoutMembers } from '../oauth/users.service';
import { Organization } from '../organizations/organization.entity';
import { OrganizationsService } from '../organizations/organizations.service';
import { resourcesReferrersFirst, SERVER_RESOURCES } from '../resources';
import { SeedService } from '../seed/seed.service';

type SandboxCreate = z.output<typeof SandboxCreateSchema>;

/**
 * What a reset deletes besides the resources' records (which come from the registry, see
 * `dataTables`): the organization's own jobs and replayable responses. Tokens, webhooks, audit
 * entries and the change feed stay.
 */
const SANDBOX_JOB_TABLES = ['imports', 'exports', 'idempotency_keys'] as const;

export function toSandboxResource(record: Organization): Sandbox {
  return {
    id: record.id as Sandbox['id'],
    object: 'sandbox',
    name: record.name,
    parent_id: record.parentOrganizationId as Sandbox['parent_id'],
    students: record.sandboxStudents ?? 0,
    seed: record.sandboxSeed ?? 0,
    created_at: toIso(record.createdAt),
    reset_at: record.sandboxResetAt ? toIso(record.sandboxResetAt) : null,
  };
}

/**
 * Sandbox organizations (docs/sandboxes.md): created, listed, reset and deleted by their parent's
 * admins; each an organization of its own, seeded with a generated school.
 */
@Injectable()
export class SandboxesService {
  constructor(
    @InjectRepository(Organization) private readonly organizations: Repository<Organization>,
    private readonly organizationsService: OrganizationsService,
    private readonly seed: SeedService,
    private readonly transactions: TransactionRunner,
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async create(principal: Principal, input: SandboxCreate, actor: ApiAuditActor) {
    const parent = await this.organizations.findOneByOrFail({ id: principal.organizationId });
    if (parent.parentOrganizationId) {
      throw new ProblemException('conflict', 'A sandbox has no sandboxes of its own');
    }
    const count = await this.organizations.countBy({ parentOrganizationId: parent.id });
    if (count >= SANDBOX_LIMIT) {
      throw new ProblemException(
        'conflict',
        `An organization has at most ${SANDBOX_LIMIT} sandboxes; delete one first`,
      );
    }
    const sandbox = await this.organizationsService.create({
      name: input.name,
      sandbox: { parentId: parent.id, students: input.students, seed: input.seed },
    });
    try {
      await this.seed.seedSchool(sandbox.id, input.students, input.seed);
    } catch (error) {
      await this.remove(sandbox.id);
      throw error;
    }
    await this.audit.record(actor, {
      action: 'sandbox.created',
      targetType: 'sandbox',
      targetId: sandbox.id,
      changes: { name: sandbox.name, students: input.students, seed: input.seed },
    });
    return toSandboxResource(sandbox);
  }

  /** A page of the organization's sandboxes (there are at most SANDBOX_LIMIT), newest first. */
  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    const all = await this.organizations.find({
      where: { parentOrganizationId: principal.organizationId },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
    const start = (query.page - 1) * query.per_page;
    return {
      data: all.slice(start, start + query.per_page).map(toSandboxResource),
      ...pageEnvelope(url, query, { count: all.length, exact: true }),
    };
  }

  /** A sandbox of the caller's organization; 404 for anything else. */
  async find(principal: Principal, id: string): Promise<Organization> {
    const found = await this.organizations.findOneBy({
      id,
      parentOrganizationId: principal.organizationId,
    });
    if (!found) throw notFound('sandbox', id);
    return found;
  }

  /**
   * Every table a reset empties: each resource's, referrers before what they refer to (so no
   * foreign key trips), then the jobs'. A resource added to the registry is reset with no change
   * here.
   */
  private dataTables(): string[] {
    return [
      ...resourcesReferrersFirst().map((name) => this.sql.table(SERVER_RESOURCES[name].entity)),
      ...SANDBOX_JOB_TABLES,
    ];
  }

  /**
   * Its records deleted and its school generated again from its seed, sending no events: in one
   * transaction, so a reset that fails half-way leaves the sandbox as it was.
   */
  async reset(principal: Principal, id: string, actor: ApiAuditActor): Promise<Sandbox> {
    const sandbox = await this.find(principal, id);
    const resetAt = this.clock.now();
    const work = async () => {
      await this.transactions.run(async (manager) => {
        // One reset of a sandbox at a time, and none of one deleted meanwhile: a second waits
        // for the first to commit (the row lock; SQLite has one writer), then starts over.
        const [held] = await this.sql.query(
          manager,
          `SELECT id FROM organizations WHERE id = :id${this.sql.lockRows()}`,
          { id },
        );
        if (!held) throw notFound('sandbox', id);
        // The seed below recounts the tallies once; the deletes do not each upsert them.
        for (const statement of bulkLoadStatements(this.sql.dialect))
          await manager.query(statement);
        for (const table of this.dataTables()) {
          await this.sql.query(manager, `DELETE FROM ${table} WHERE organization_id = :id`, { id });
        }
      });
      await this.seed.seedSchool(id, sandbox.sandboxStudents ?? 0, sandbox.sandboxSeed ?? 0);
      await this.transactions.run((manager) =>
        manager.update(Organization, { id }, { sandboxResetAt: resetAt }),
      );
    };
    // Inside a request's transaction (an Idempotency-Key) it is already one; else make it one.
    await (ambientTransaction() ? work() : this.transactions.atomic(work));
    sandbox.sandboxResetAt = resetAt;
    await this.audit.record(actor, {
      action: 'sandbox.reset',
      targetType: 'sandbox',
      targetId: id,
    });
    return toSandboxResource(sandbox);
  }

  async delete(principal: Principal, id: string, actor: ApiAuditActor) {
    const sandbox = await this.find(principal, id);
    await this.remove(sandbox.id);
    await this.audit.record(actor, {
      action: 'sandbox.deleted',
      targetType: 'sandbox',
      targetId: id,
      changes: { name: sandbox.name },
    });
    return { id, object: 'sandbox' as const, deleted: true as const };
  }

  /**
   * The organization and, through its tables' cascades, everything in it; the accounts of its
   * members (made by its own invitations) that belong nowhere else then.
   */
  private async remove(id: string): Promise<void> {
    await this.transactions.run(async (manager) => {
      const members = await manager.find(UserRecord, {
        where: { organizationId: id },
        select: { accountId: true },
      });
      // Its rows go by the cascade without a tally upsert each; its tallies go below.
      for (const statement of bulkLoadStatements(this.sql.dialect)) await manager.query(statement);
      await manager.delete(Organization, { id });
      await dropAccountsWithoutMembers(
        this.sql,
        manager,
        members.map((m) => m.accountId),
      );
      // The tallies have no foreign key (database/list-tallies.ts): removed by hand.
      await this.sql.query(manager, `DELETE FROM ${LIST_TALLIES} WHERE organization_id = :id`, {
        id,
      });
    });
  }
}

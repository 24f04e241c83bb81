import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import type { AuditActor } from '../audit/audit-actor';
import { Clock } from '../common/clock';
import { type AuditEntry, AuditService } from '../audit/audit.service';
import { TransactionRunner } from '../common/transactions';
import { newId } from '../common/ids';
import { ProblemException } from '../common/problem.exception';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Sql } from '../database/sql';
import { Organization, type Plan } from './organization.entity';

export interface UpdateOrganizationInput {
  name?: string;
  plan?: Plan;
  /** Requests per rolling minute; null: back to the default. */
  rateLimitPerMinute?: number | null;
}

export interface CreateOrganizationInput {
  name: string;
  plan?: Plan;
  rateLimitPerMinute?: number;
  /** A sandbox's parent, size and seed (docs/sandboxes.md). */
  sandbox?: { parentId: string; students: number; seed: number };
}

@Injectable()
export class OrganizationsService {
  constructor(
    @InjectRepository(Organization) private readonly organizations: Repository<Organization>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transactions: TransactionRunner,
    private readonly audit: AuditService,
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  create(input: CreateOrganizationInput): Promise<Organization> {
    return this.createWithId(newId('organization'), input);
  }

  /** With a chosen id: only for fixed demo data. */
  async createWithId(id: string, input: CreateOrganizationInput): Promise<Organization> {
    const plan = input.plan ?? 'standard';
    const name = checkName(input.name);
    this.checkRateLimit(plan, input.rateLimitPerMinute ?? null);
    const now = this.clock.now();
    return this.organizations.save(
      this.organizations.create({
        id,
        name,
        plan,
        rateLimitPerMinute: input.rateLimitPerMinute ?? null,
        parentOrganizationId: input.sandbox?.parentId ?? null,
        sandboxStudents: input.sandbox?.students ?? null,
        sandboxSeed: input.sandbox?.seed ?? null,
        sandboxResetAt: null,
        createdAt: now,
        updatedAt: now,
      }),
    );
  }

  /**
   * Changes name, plan and limit, with the create rules (a limit above the default needs the
   * enterprise plan, so a downgrade with a raised limit is refused too). One audit entry per
   * kind of change, in the same transaction. The limit applies from the next request on every
   * instance: each request reads it with its token (see TokensService.authenticate).
   */
  async update(
    id: string,
    input: UpdateOrganizationInput,
    actor: AuditActor,
  ): Promise<Organization> {
    return this.transactions.run(async (manager) => {
      if (this.sql.dialect === 'postgres') {
        await this.sql.query(
          manager,
          `SELECT 1 FROM ${this.sql.table(Organization)} WHERE ${this.sql.column(Organization, 'id')} = :id${this.sql.lockRows()}`,
          { id },
        );
      }
      const organization = await manager.findOneBy(Organization, { id });
      if (!organization) throw new ProblemException('not_found', `No organization ${id}`);
      const name = input.name === undefined ? organization.name : checkName(input.name);
      const plan = input.plan ?? organization.plan;
      const limit =
        input.rateLimitPerMinute === undefined
          ? organization.rateLimitPerMinute
          : input.rateLimitPerMinute;
      this.checkRateLimit(plan, limit);
      const entries: { action: AuditEntry['action']; changes: Record<string, unknown> }[] = [];
      if (name !== organization.name)
        entries.push({
          action: 'organization.updated',
          changes: { name: [organization.name, name] },
        });
      if (plan !== organization.plan)
        entries.push({
          action: 'organization.plan_changed',
          changes: { plan: [organization.plan, plan] },
        });
      const before = this.rateLimitOf(organization);
      const after = this.rateLimitOf({ rateLimitPerMinute: limit });
      if (limit !== organization.rateLimitPerMinute)
        entries.push({
          action: 'organization.rate_limit_changed',
          changes: { rate_limit_per_minute: [before, after] },
        });
      if (entries.length === 0) return organization;
      const updatedAt = this.clock.now();
      await manager.update(
        Organization,
        { id },
        { name, plan, rateLimitPerMinute: limit, updatedAt },
      );
      for (const entry of entries) {
        await this.audit.record(
          actor,
          { ...entry, organizationId: id, targetType: 'organization', targetId: id },
          manager,
        );
      }
      return Object.assign(organization, { name, plan, rateLimitPerMinute: limit, updatedAt });
    });
  }

  async list(): Promise<Organization[]> {
    return this.organizations.find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** Raising the limit is an Enterprise feature; a lower limit (a sandbox) is allowed on any plan. */
  private checkRateLimit(plan: Plan, limit: number | null): void {
    if (limit === null) return;
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new ProblemException('validation_error', 'rate limit must be a positive integer');
    }
    if (plan !== 'enterprise' && limit > this.config.rateLimit.defaultPerMinute) {
      throw new ProblemException(
        'validation_error',
        `a rate limit above ${this.config.rateLimit.defaultPerMinute}/min needs the enterprise plan (this organization would be on ${plan})`,
      );
    }
  }

  findById(id: string): Promise<Organization | null> {
    return this.organizations.findOneBy({ id });
  }

  async count(): Promise<number> {
    return this.organizations.count();
  }

  /** Requests per rolling minute this organization may make. */
  rateLimitOf(organization: Pick<Organization, 'rateLimitPerMinute'>): number {
    return organization.rateLimitPerMinute ?? this.config.rateLimit.defaultPerMinute;
  }
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (!name) throw new ProblemException('validation_error', 'name must not be empty');
  if (name.length > 200) {
    throw new ProblemException('validation_error', 'name must be at most 200 characters');
  }
  return name;
}

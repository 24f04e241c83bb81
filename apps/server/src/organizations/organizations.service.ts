import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { newId } from '../common/ids';
import { ProblemException } from '../common/problem.exception';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Organization, type Plan } from './organization.entity';

export interface CreateOrganizationInput {
  name: string;
  plan?: Plan;
  rateLimitPerMinute?: number;
}

@Injectable()
export class OrganizationsService {
  constructor(
    @InjectRepository(Organization) private readonly organizations: Repository<Organization>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  create(input: CreateOrganizationInput): Promise<Organization> {
    return this.createWithId(newId('organization'), input);
  }

  /** With a chosen id: only for fixed demo data. */
  async createWithId(id: string, input: CreateOrganizationInput): Promise<Organization> {
    const plan = input.plan ?? 'standard';
    const name = input.name.trim();
    if (!name) throw new ProblemException('validation_error', 'name must not be empty');
    if (input.rateLimitPerMinute !== undefined) {
      if (!Number.isSafeInteger(input.rateLimitPerMinute) || input.rateLimitPerMinute < 1) {
        throw new ProblemException('validation_error', 'rate limit must be a positive integer');
      }
      // Raising the limit is an Enterprise feature; a lower limit (a sandbox) is allowed on any plan.
      if (
        plan !== 'enterprise' &&
        input.rateLimitPerMinute > this.config.rateLimit.defaultPerMinute
      ) {
        throw new ProblemException(
          'validation_error',
          `a rate limit above ${this.config.rateLimit.defaultPerMinute}/min needs the enterprise plan`,
        );
      }
    }
    const now = new Date();
    return this.organizations.save(
      this.organizations.create({
        id,
        name,
        plan,
        rateLimitPerMinute: input.rateLimitPerMinute ?? null,
        createdAt: now,
        updatedAt: now,
      }),
    );
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

import { Injectable } from '@nestjs/common';
import { ALL_SCOPES } from '@platform/contract';
import { TokensService } from '../auth/tokens.service';
import { OrganizationsService } from '../organizations/organizations.service';
import { StudentsService } from '../students/students.service';
import { demoStudents } from './demo-students';
import { DEMO_ORGANIZATION_ID, DEMO_ORGANIZATION_NAME, DEMO_STUDENT_IDS, DEV_TOKEN_NAME } from './seed.constants';

export interface SeedResult {
  organization_id: string;
  organization_created: boolean;
  students_created: number;
  token: string;
  token_id: string;
}

@Injectable()
export class SeedService {
  constructor(
    private readonly organizations: OrganizationsService,
    private readonly tokens: TokensService,
    private readonly students: StudentsService,
  ) {}

  /**
   * Creates the demo organization (fixed id) with `studentCount` students if it does not exist
   * yet, and a new all-scopes token for it. Running it again only adds a token.
   */
  async seed(options: { students: number; tokenName?: string; rateLimitPerMinute?: number }): Promise<SeedResult> {
    let organization = await this.organizations.findById(DEMO_ORGANIZATION_ID);
    const organizationCreated = !organization;
    let studentsCreated = 0;
    if (!organization) {
      organization = await this.organizations.createWithId(DEMO_ORGANIZATION_ID, {
        name: DEMO_ORGANIZATION_NAME,
        plan: options.rateLimitPerMinute ? 'enterprise' : 'standard',
        ...(options.rateLimitPerMinute && { rateLimitPerMinute: options.rateLimitPerMinute }),
      });
      studentsCreated = await this.students.insertMany(demoStudents(organization.id, options.students, Date.now(), DEMO_STUDENT_IDS));
    }
    const { token, record } = await this.tokens.create({
      organizationId: organization.id,
      name: options.tokenName ?? 'seed',
      scopes: ALL_SCOPES,
    });
    return {
      organization_id: organization.id,
      organization_created: organizationCreated,
      students_created: studentsCreated,
      token,
      token_id: record.id,
    };
  }

  /** For `pnpm dev`: seed an empty database, then hand out a fresh demo token (revoking the last). */
  async devBootstrap(): Promise<SeedResult | { skipped: string }> {
    const demo = await this.organizations.findById(DEMO_ORGANIZATION_ID);
    if (!demo && (await this.organizations.count()) > 0) {
      return { skipped: 'the database has organizations but no demo organization; not seeding' };
    }
    if (demo) await this.tokens.revokeByName(demo.id, DEV_TOKEN_NAME);
    return this.seed({ students: 200, tokenName: DEV_TOKEN_NAME });
  }
}

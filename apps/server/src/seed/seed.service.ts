import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Injectable } from '@nestjs/common';
import { ALL_SCOPES } from '@platform/contract';
import { TokensService } from '../auth/tokens.service';
import { OrganizationsService } from '../organizations/organizations.service';
import { StudentsService } from '../students/students.service';
import { demoStudents } from './demo-students';
import {
  DEMO_ORGANIZATION_ID,
  DEMO_ORGANIZATION_NAME,
  DEMO_STUDENT_IDS,
  DEV_TOKEN_NAME,
} from './seed.constants';

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
  async seed(options: {
    students: number;
    tokenName?: string;
    rateLimitPerMinute?: number;
  }): Promise<SeedResult> {
    let organization = await this.organizations.findById(DEMO_ORGANIZATION_ID);
    const organizationCreated = !organization;
    let studentsCreated = 0;
    if (!organization) {
      organization = await this.organizations.createWithId(DEMO_ORGANIZATION_ID, {
        name: DEMO_ORGANIZATION_NAME,
        plan: options.rateLimitPerMinute ? 'enterprise' : 'standard',
        ...(options.rateLimitPerMinute && { rateLimitPerMinute: options.rateLimitPerMinute }),
      });
      studentsCreated = await this.students.insertMany(
        demoStudents(organization.id, options.students, Date.now(), DEMO_STUDENT_IDS),
      );
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

  /**
   * For `pnpm dev`: seed an empty database and hand out a demo token. The token is kept in the
   * git-ignored data/ directory (beside the SQLite file that holds the data anyway), so restarts
   * in watch mode keep printing the same working token; a new one replaces it only when it no
   * longer works.
   */
  async devBootstrap(tokenFile: string): Promise<SeedResult | { skipped: string }> {
    const demo = await this.organizations.findById(DEMO_ORGANIZATION_ID);
    if (!demo && (await this.organizations.count()) > 0) {
      return { skipped: 'the database has organizations but no demo organization; not seeding' };
    }
    const saved = existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : '';
    if (demo && saved) {
      const auth = await this.tokens.authenticate(saved);
      if (auth.ok && auth.principal.organizationId === demo.id) {
        return {
          organization_id: demo.id,
          organization_created: false,
          students_created: 0,
          token: saved,
          token_id: auth.principal.tokenId,
        };
      }
    }
    if (demo) await this.tokens.revokeByName(demo.id, DEV_TOKEN_NAME);
    const result = await this.seed({ students: 200, tokenName: DEV_TOKEN_NAME });
    mkdirSync(path.dirname(tokenFile), { recursive: true });
    writeFileSync(tokenFile, `${result.token}\n`, { mode: 0o600 });
    return result;
  }
}

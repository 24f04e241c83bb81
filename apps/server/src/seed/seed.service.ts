import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Injectable } from '@nestjs/common';
import { ALL_SCOPES } from '@platform/contract';
import { Clock } from '../common/clock';
import { OPERATOR } from '../audit/audit-actor';
import { TokensService } from '../auth/tokens.service';
import { bulkLoadStatements, recountOrganization } from '../database/list-tallies';
import { Sql } from '../database/sql';
import { insertRows } from '../database/write-rows';
import { TransactionRunner } from '../common/transactions';
import { Course } from '../courses/course.entity';
import { Enrollment } from '../enrollments/enrollment.entity';
import { ExamResult } from '../exams/exam-result.entity';
import { Exam } from '../exams/exam.entity';
import { Organization } from '../organizations/organization.entity';
import { OrganizationsService } from '../organizations/organizations.service';
import { Payment } from '../payments/payment.entity';
import { Student } from '../students/student.entity';
import { demoSchool } from './demo-school';
import { demoStudents } from './demo-students';
import {
  DEMO_ORGANIZATION_ID,
  DEMO_ORGANIZATION_NAME,
  DEMO_STUDENT_IDS,
  DEV_TOKEN_NAME,
} from './seed.constants';

/** How many records of each kind the seed wrote (all zero when the demo organization existed). */
export interface SeedCounts {
  students: number;
  courses: number;
  enrollments: number;
  payments: number;
  exams: number;
  exam_results: number;
}

export interface SeedResult {
  organization_id: string;
  organization_created: boolean;
  /** The demo organization's limit now (requests per minute). */
  rate_limit_per_minute: number;
  /** Same as `created.students`; kept for scripts written before the other resources. */
  students_created: number;
  created: SeedCounts;
  token: string;
  token_id: string;
}

const NOTHING_CREATED: SeedCounts = {
  students: 0,
  courses: 0,
  enrollments: 0,
  payments: 0,
  exams: 0,
  exam_results: 0,
};

/** Rows per INSERT: well below the bind-parameter limits of SQLite (32766) and PostgreSQL. */

@Injectable()
export class SeedService {
  constructor(
    private readonly organizations: OrganizationsService,
    private readonly tokens: TokensService,
    private readonly transactions: TransactionRunner,
    private readonly clock: Clock,
    private readonly sql: Sql,
  ) {}

  /**
   * Creates the demo organization (fixed id) with `students` students and a school year of
   * courses, enrollments, payments, exams and results around them if it does not exist yet, and
   * a new all-scopes token for it. Running it again only adds a token.
   */
  async seed(options: {
    students: number;
    tokenName?: string;
    rateLimitPerMinute?: number;
  }): Promise<SeedResult> {
    let organization = await this.organizations.findById(DEMO_ORGANIZATION_ID);
    const organizationCreated = !organization;
    let created = NOTHING_CREATED;
    if (!organization) {
      organization = await this.organizations.createWithId(DEMO_ORGANIZATION_ID, {
        name: DEMO_ORGANIZATION_NAME,
        plan: options.rateLimitPerMinute ? 'enterprise' : 'standard',
        ...(options.rateLimitPerMinute && { rateLimitPerMinute: options.rateLimitPerMinute }),
      });
      try {
        created = await this.insertDemoData(organization.id, options.students);
      } catch (error) {
        // Without its data the next run would take the organization for seeded: remove it.
        await this.transactions.run((manager) =>
          manager.delete(Organization, { id: DEMO_ORGANIZATION_ID }),
        );
        throw error;
      }
    } else if (options.rateLimitPerMinute) {
      // An existing demo organization takes the asked limit too (audited as an operator's
      // change), rather than the option being silently ignored.
      organization = await this.organizations.update(
        organization.id,
        { plan: 'enterprise', rateLimitPerMinute: options.rateLimitPerMinute },
        OPERATOR,
      );
    }
    const { token, record } = await this.tokens.create(
      {
        organizationId: organization.id,
        name: options.tokenName ?? 'seed',
        scopes: ALL_SCOPES,
      },
      OPERATOR,
    );
    return {
      organization_id: organization.id,
      organization_created: organizationCreated,
      rate_limit_per_minute: this.organizations.rateLimitOf(organization),
      students_created: created.students,
      created,
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
          rate_limit_per_minute: this.organizations.rateLimitOf(demo),
          students_created: 0,
          created: NOTHING_CREATED,
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

  /**
   * The demo organization's students and school year, written straight into the tables in one
   * transaction, in multi-row INSERTs (10,000 students take seconds, not minutes).
   *
   * No outbox events are recorded: demo data is the organization's starting state, not changes
   * to it, so the events feed and webhooks start empty (and seeding stays fast).
   */
  private insertDemoData(organizationId: string, studentCount: number): Promise<SeedCounts> {
    return this.insertSchool(organizationId, studentCount, { fixedIds: true, seed: 0 });
  }

  /**
   * A generated school for a sandbox (docs/sandboxes.md): the same `seed` and size give the same
   * school (dated from now, with new ids), written as the demo organization's is.
   */
  seedSchool(organizationId: string, studentCount: number, seed: number): Promise<SeedCounts> {
    return this.insertSchool(organizationId, studentCount, { fixedIds: false, seed });
  }

  private async insertSchool(
    organizationId: string,
    studentCount: number,
    options: { fixedIds: boolean; seed: number },
  ): Promise<SeedCounts> {
    const now = this.clock.nowMs();
    const fixed = options.fixedIds ? DEMO_STUDENT_IDS : [];
    const students = demoStudents(organizationId, studentCount, now, fixed, options.seed);
    const school = demoSchool(organizationId, students, { now, ...options });
    await this.transactions.run(async (manager) => {
      // One organization's rows in bulk: its tallies counted once at the end, not per row.
      for (const statement of bulkLoadStatements(this.sql.dialect)) await manager.query(statement);
      // Parents before children, for the foreign keys.
      await insertRows(manager, Student, students);
      await insertRows(manager, Course, school.courses);
      await insertRows(manager, Exam, school.exams);
      await insertRows(manager, Enrollment, school.enrollments);
      await insertRows(manager, Payment, school.payments);
      await insertRows(manager, ExamResult, school.examResults);
      for (const statement of recountOrganization(this.sql.dialect))
        await this.sql.query(manager, statement, { organization: organizationId });
    });
    return {
      students: students.length,
      courses: school.courses.length,
      enrollments: school.enrollments.length,
      payments: school.payments.length,
      exams: school.exams.length,
      exam_results: school.examResults.length,
    };
  }
}

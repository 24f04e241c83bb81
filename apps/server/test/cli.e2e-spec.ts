import type { Course, Enrollment, Exam, ExamResult, Payment, Student } from '@platform/contract';
import { DataSource } from 'typeorm';
import { loadConfig } from '../src/config/env';
import { dataSourceOptions } from '../src/database/data-source';
import { APP_SCHEMA } from '../src/schema';
import { EventRecord } from '../src/events/event.entity';
import {
  DEMO_COURSE_IDS,
  DEMO_ENROLLMENT_IDS,
  DEMO_EXAM_IDS,
  DEMO_EXAM_RESULT_IDS,
  DEMO_ORGANIZATION_ID,
  DEMO_PAYMENT_IDS,
  DEMO_STUDENT_IDS,
} from '../src/seed/seed.constants';
import { prepareDatabase } from '../src/testing';
import { platform, platformWithInput } from './support/cli';
import { all, expectValidSchoolYear, retrieved } from './support/school-year';
import { expectStatus, typedClient } from './support/api';
import { DATABASE_KIND, databaseOptions, startServer, type TestServer } from './support/server';

/** A confidential OAuth client with every grant, made with `oauth-clients:create --json`. */
async function createTimetableClient(databaseUrl: string, org: string) {
  const created = await platform(
    databaseUrl,
    'oauth-clients:create',
    '--org',
    org,
    '--name',
    'Timetable Sync',
    '--type',
    'confidential',
    '--redirect-uri',
    'https://timetable.example/callback',
    '--scopes',
    'students:read,courses:read',
    '--grants',
    'authorization_code,refresh_token,client_credentials',
    '--json',
  );
  return JSON.parse(created.stdout);
}

/** A second seed creates nothing, and hands out a new working token. */
async function expectReseedAddsNothing(server: TestServer, databaseUrl: string, token: string) {
  const again = JSON.parse((await platform(databaseUrl, 'seed', '--json')).stdout);
  expect(again).toMatchObject({
    organization_created: false,
    students_created: 0,
    created: {
      students: 0,
      courses: 0,
      enrollments: 0,
      payments: 0,
      exams: 0,
      exam_results: 0,
    },
  });
  expect(again.token).not.toBe(token);
  const againCourses = await typedClient(server, again.token).courses.list();
  expect(expectStatus(againCourses, 200).body.meta.total).toBe(8);
}

/** `--role` takes the member roles, and nothing else. */
async function expectRoleChoices(databaseUrl: string, org: string) {
  const viewer = await platform(
    databaseUrl,
    'users:create',
    '--org',
    org,
    '--email',
    'auditor@lake.example',
    '--role',
    'viewer',
    '--name',
    'Ann Auditor',
    '--json',
  );
  expect(viewer.code).toBe(0);
  expect(JSON.parse(viewer.stdout)).toMatchObject({ role: 'viewer', name: 'Ann Auditor' });
  const badRole = await platform(
    databaseUrl,
    'users:create',
    '--org',
    org,
    '--email',
    'boss@lake.example',
    '--role',
    'owner',
  );
  expect(badRole.code).not.toBe(0);
  expect(badRole.stderr).toMatch(/admin, developer, viewer/);
}

/** A piped password is never echoed, and must be long and not a known leaked one. */
async function expectPipedPasswordRules(databaseUrl: string, org: string) {
  const piped = await platformWithInput(
    databaseUrl,
    'a long enough passphrase\n',
    'users:create',
    '--org',
    org,
    '--email',
    'teacher@lake.example',
    '--password-stdin',
  );
  expect(piped.code).toBe(0);
  expect(piped.stdout).toContain('Created user usr_');
  expect(piped.stdout).not.toContain('password');

  const short = await platformWithInput(
    databaseUrl,
    'short\n',
    'users:create',
    '--org',
    org,
    '--email',
    'other@lake.example',
    '--password-stdin',
  );
  expect(short.code).toBe(1);
  expect(short.stderr).toContain('password: must be at least 12 characters long');

  // Long enough, but on every list of leaked passwords (NIST SP 800-63B).
  const common = await platformWithInput(
    databaseUrl,
    '1q2w3e4r5t6y\n',
    'users:create',
    '--org',
    org,
    '--email',
    'other@lake.example',
    '--password-stdin',
  );
  expect(common.code).toBe(1);
  expect(common.stderr).toContain('password: is too easy to guess');
}

/** The database holds a hash of the client secret and argon2id hashes of passwords only. */
async function expectOnlyHashesStored(
  databaseUrl: string,
  client: { id: string; client_secret: string },
) {
  const check = new DataSource(
    dataSourceOptions(loadConfig({ DATABASE_URL: databaseUrl }).database, APP_SCHEMA),
  );
  await check.initialize();
  try {
    const stored = await check.query(
      `SELECT secret_hash FROM oauth_clients WHERE id = ${DATABASE_KIND === 'postgres' ? '$1' : '?'}`,
      [client.id],
    );
    expect(stored[0].secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(client.client_secret);
    const users = await check.query('SELECT password_hash FROM accounts');
    for (const row of users) expect(row.password_hash).toMatch(/^\$argon2id\$/);
  } finally {
    await check.destroy();
  }
}

describe('pnpm platform (the admin CLI)', () => {
  let db: Awaited<ReturnType<typeof prepareDatabase>>;

  beforeAll(async () => {
    db = await prepareDatabase(databaseOptions());
  });
  afterAll(() => db.drop());

  it('creates organizations, and tokens that are shown once, listed without secrets and revocable', async () => {
    const org = JSON.parse(
      (await platform(db.databaseUrl, 'orgs:create', '--name', 'Hill School', '--json')).stdout,
    );
    expect(org).toMatchObject({
      object: 'organization',
      name: 'Hill School',
      plan: 'standard',
      rate_limit_per_minute: 600,
    });
    expect(org.id).toMatch(/^org_/);

    const created = JSON.parse(
      (
        await platform(
          db.databaseUrl,
          'tokens:create',
          '--org',
          org.id,
          '--name',
          'sis sync',
          '--scopes',
          'students:read,students:write',
          '--expires-in',
          '30',
          '--json',
        )
      ).stdout,
    );
    expect(created.token).toMatch(/^pat_[0-9A-Za-z]{36}$/);
    expect(created.scopes).toEqual(['students:read', 'students:write']);
    expect(Date.parse(created.expires_at) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const listed = (await platform(db.databaseUrl, 'tokens:list', '--org', org.id, '--json'))
      .stdout;
    expect(listed).not.toContain(created.token);
    expect(JSON.parse(listed).data).toEqual([
      expect.objectContaining({
        id: created.id,
        prefix: created.token.slice(0, 12),
        revoked_at: null,
      }),
    ]);

    const revoked = JSON.parse(
      (await platform(db.databaseUrl, 'tokens:revoke', '--id', created.id, '--json')).stdout,
    );
    expect(revoked.revoked_at).toEqual(expect.any(String));
  });

  it('expands --scopes all and refuses unknown scopes with the valid list', async () => {
    const org = JSON.parse(
      (await platform(db.databaseUrl, 'orgs:create', '--name', 'X', '--json')).stdout,
    );
    const all = JSON.parse(
      (
        await platform(
          db.databaseUrl,
          'tokens:create',
          '--org',
          org.id,
          '--name',
          'a',
          '--scopes',
          'all',
          '--json',
        )
      ).stdout,
    );
    expect(all.scopes).toContain('exam_results:write');
    const bad = await platform(
      db.databaseUrl,
      'tokens:create',
      '--org',
      org.id,
      '--name',
      'a',
      '--scopes',
      'students:delete',
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/unknown scope students:delete; valid scopes are students:read/);
  });

  it('refuses a raised limit without the enterprise plan, and accepts it with it', async () => {
    const refused = await platform(
      db.databaseUrl,
      'orgs:create',
      '--name',
      'Big',
      '--rate-limit',
      '5000',
      '--json',
    );
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error.message).toMatch(/enterprise/);
    const ok = JSON.parse(
      (
        await platform(
          db.databaseUrl,
          'orgs:create',
          '--name',
          'Big',
          '--plan',
          'enterprise',
          '--rate-limit',
          '5000',
          '--json',
        )
      ).stdout,
    );
    expect(ok.rate_limit_per_minute).toBe(5000);
  });

  it('seeds the demo organization with a school year of valid data, and a working token', async () => {
    // A server on its own database, so the seeded data is read back through the API.
    const server = await startServer();
    try {
      const { database } = server.config;
      const databaseUrl = database.type === 'sqlite' ? `sqlite:${database.path}` : database.url;
      const seeded = JSON.parse(
        (await platform(databaseUrl, 'seed', '--students', '30', '--json')).stdout,
      );
      expect(seeded).toMatchObject({
        organization_id: DEMO_ORGANIZATION_ID,
        organization_created: true,
        students_created: 30,
        created: { students: 30, courses: 8, exams: 16 },
      });
      const { enrollments, payments, exam_results } = seeded.created;
      // One to three per student.
      expect(enrollments).toBeGreaterThanOrEqual(30);
      expect(enrollments).toBeLessThanOrEqual(90);
      expect(payments).toBeGreaterThanOrEqual(enrollments * 0.8);
      expect(exam_results).toBeGreaterThanOrEqual(10);

      const api = typedClient(server, seeded.token);
      const refunded = await api.payments.retrieve({
        params: { id: DEMO_PAYMENT_IDS.lat101PartlyRefunded },
      });
      expect(expectStatus(refunded, 200).body).toMatchObject({
        status: 'refunded',
        currency: 'EUR',
        amount: 35_000,
        amount_refunded: 7_000,
      });

      const courses = await all<Course>('courses', 8, (query) => api.courses.list({ query }));
      const exams = await all<Exam>('exams', 16, (query) => api.exams.list({ query }));
      const enrolled = await all<Enrollment>('enrollments', enrollments, (query) =>
        api.enrollments.list({ query }),
      );
      const paid = await all<Payment>('payments', payments, (query) =>
        api.payments.list({ query }),
      );
      const results = await all<ExamResult>('exam_results', exam_results, (query) =>
        api.examResults.list({ query }),
      );
      expectValidSchoolYear({ courses, exams, enrolled, paid, results });
      const students = await all<Student>('students', 30, (query) => api.students.list({ query }));
      // The documented ids, through the API (so they are valid resources, not just rows).
      await retrieved((args) => api.students.retrieve(args), DEMO_STUDENT_IDS, students);
      await retrieved(
        (args) => api.courses.retrieve(args),
        Object.values(DEMO_COURSE_IDS),
        courses,
      );
      await retrieved(
        (args) => api.enrollments.retrieve(args),
        Object.values(DEMO_ENROLLMENT_IDS),
        enrolled,
      );
      await retrieved((args) => api.payments.retrieve(args), Object.values(DEMO_PAYMENT_IDS), paid);
      await retrieved((args) => api.exams.retrieve(args), Object.values(DEMO_EXAM_IDS), exams);
      await retrieved(
        (args) => api.examResults.retrieve(args),
        Object.values(DEMO_EXAM_RESULT_IDS),
        results,
      );

      // Demo data is the starting state: no events were recorded for it.
      expect(
        await server.dataSource
          .getRepository(EventRecord)
          .countBy({ organizationId: DEMO_ORGANIZATION_ID }),
      ).toBe(0);

      await expectReseedAddsNothing(server, databaseUrl, seeded.token);
    } finally {
      await server.close();
    }
  });

  it('creates users with a generated or piped password, and OAuth clients whose secret is shown once', async () => {
    const org = JSON.parse(
      (await platform(db.databaseUrl, 'orgs:create', '--name', 'Lake School', '--json')).stdout,
    );
    const generated = await platform(
      db.databaseUrl,
      'users:create',
      '--org',
      org.id,
      '--email',
      'Head@Lake.example',
      '--json',
    );
    expect(generated.code).toBe(0);
    const user = JSON.parse(generated.stdout);
    expect(user).toMatchObject({
      object: 'user',
      organization_id: org.id,
      email: 'head@lake.example',
    });
    expect(user.id).toMatch(/^usr_/);
    expect(user.password.length).toBeGreaterThanOrEqual(20);
    // The first member an operator makes runs the organization: admin unless told otherwise.
    expect(user.role).toBe('admin');

    await expectRoleChoices(db.databaseUrl, org.id);
    await expectPipedPasswordRules(db.databaseUrl, org.id);

    const duplicate = await platform(
      db.databaseUrl,
      'users:create',
      '--org',
      org.id,
      '--email',
      'head@lake.example',
    );
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('already exists');

    const client = await createTimetableClient(db.databaseUrl, org.id);
    expect(client).toMatchObject({
      object: 'oauth_client',
      type: 'confidential',
      redirect_uris: ['https://timetable.example/callback'],
      scopes: ['students:read', 'courses:read'],
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
    });
    expect(client.client_secret).toMatch(/^ocs_/);

    await expectOnlyHashesStored(db.databaseUrl, client);

    const bad = await platform(
      db.databaseUrl,
      'oauth-clients:create',
      '--org',
      org.id,
      '--name',
      'Bad',
      '--type',
      'public',
      '--redirect-uri',
      'http://example.com/cb',
      '--scopes',
      'students:read',
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('redirect_uris.0');
  });
});

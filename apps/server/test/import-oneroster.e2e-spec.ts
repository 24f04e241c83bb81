import type { Import } from '@platform/contract';
import { batchCaller } from './support/batch';
import { errorReport, finished, upload } from './support/imports';
import {
  type BundleSpec,
  ONEROSTER_1_1_USERS,
  oneRosterBundle,
  type OneRosterRow,
} from './support/oneroster';
import {
  eventsOf,
  problemOf,
  type RawResponse,
  rawClient,
  startServer,
  type TestServer,
} from './support/server';

type Row = { id: string; external_id: string | null; status: string; [field: string]: unknown };

describe('OneRoster bundles (POST /v1/imports?format=oneroster)', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let raw: ReturnType<typeof rawClient>;

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  beforeEach(async () => {
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['all']));
    raw = rawClient(server, token);
  });

  const sendBundle = async (spec: BundleSpec, query = 'format=oneroster', as = token) =>
    upload(server, as, query, await oneRosterBundle(spec), {
      type: 'application/zip',
      name: 'roster.zip',
    });
  /** Uploads a bundle and waits for each of its imports, in order. */
  const imported = async (spec: BundleSpec, query?: string): Promise<Import[]> => {
    const res = await sendBundle(spec, query);
    if (res.status !== 202) throw new Error(`upload: ${res.status} ${JSON.stringify(res.body)}`);
    const all: Import[] = [];
    for (const id of res.body.bundle!.imports) all.push(await finished(server, token, id));
    return all;
  };
  const list = async (path: string) =>
    (await raw.get<{ data: Row[] }>(`${path}?per_page=100`)).body.data;

  const user = (id: string, extra: OneRosterRow = {}): OneRosterRow => ({
    sourcedId: id,
    enabledUser: 'true',
    username: id.toLowerCase(),
    givenName: `Given ${id}`,
    familyName: `Family ${id}`,
    ...extra,
  });
  const role = (userId: string, name: string): OneRosterRow => ({
    sourcedId: `role-${userId}`,
    userSourcedId: userId,
    roleType: 'primary',
    role: name,
    orgSourcedId: 'school-1',
  });
  const enrollment = (id: string, userId: string, classId: string, as = 'student') => ({
    sourcedId: id,
    classSourcedId: classId,
    schoolSourcedId: 'school-1',
    userSourcedId: userId,
    role: as,
  });
  const schoolClass = (id: string, extra: OneRosterRow = {}): OneRosterRow => ({
    sourcedId: id,
    title: `Class ${id}`,
    courseSourcedId: 'course-1',
    classType: 'scheduled',
    schoolSourcedId: 'school-1',
    ...extra,
  });
  /** A small school's bulk bundle: two students, a teacher, two classes over two terms. */
  const school = (): BundleSpec => ({
    processing: {
      'orgs.csv': 'bulk',
      'academicSessions.csv': 'bulk',
      'courses.csv': 'bulk',
      'classes.csv': 'bulk',
      'users.csv': 'bulk',
      'roles.csv': 'bulk',
      'enrollments.csv': 'bulk',
      'demographics.csv': 'bulk',
    },
    files: {
      'orgs.csv': [{ sourcedId: 'school-1', name: 'North High', type: 'school' }],
      'academicSessions.csv': [
        {
          sourcedId: 'T1',
          title: 'Fall',
          type: 'term',
          startDate: '2026-08-20',
          endDate: '2026-12-20',
          schoolYear: '2027',
        },
        {
          sourcedId: 'T2',
          title: 'Spring',
          type: 'term',
          startDate: '2027-01-05',
          endDate: '2027-05-30',
          schoolYear: '2027',
        },
      ],
      'courses.csv': [
        {
          sourcedId: 'course-1',
          title: 'Mathematics 7',
          courseCode: 'M7',
          orgSourcedId: 'school-1',
        },
      ],
      'classes.csv': [
        schoolClass('class-1', { classCode: 'MATH-7A', termSourcedIds: 'T1,T2' }),
        schoolClass('class-2', { termSourcedIds: 'T1' }),
      ],
      'users.csv': [
        user('U1', {
          identifier: 'S-001',
          grades: '07',
          email: 'u1@school.test',
          preferredGivenName: 'Annie',
        }),
        user('U2', { grades: 'KG', enabledUser: 'false' }),
        user('TCH', { identifier: 'staff-9' }),
      ],
      'roles.csv': [role('U1', 'student'), role('U2', 'student'), role('TCH', 'teacher')],
      'enrollments.csv': [
        enrollment('E1', 'U1', 'class-1'),
        enrollment('E2', 'U2', 'class-2'),
        enrollment('E3', 'TCH', 'class-1', 'teacher'),
      ],
      'demographics.csv': [{ sourcedId: 'U1', birthDate: '2013-04-02' }],
    },
  });

  it('maps a bulk bundle onto students, courses and enrollments, and reports what has no place', async () => {
    const res = await sendBundle(school());
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      collection: 'students',
      mode: 'full',
      format: 'oneroster',
      bundle: { file: 'users.csv' },
    });
    const ids = res.body.bundle!.imports;
    expect(ids[0]).toBe(res.body.id);
    const [students, courses, enrollments] = await Promise.all(
      ids.map((id) => finished(server, token, id)),
    );
    expect(students).toMatchObject({ status: 'succeeded', rows: 3 });
    expect(students!.counts).toMatchObject({ created: 2, skipped: 1, failed: 0 });
    expect(courses).toMatchObject({ collection: 'courses', mode: 'full', status: 'succeeded' });
    expect(courses!.bundle).toEqual({ file: 'classes.csv', imports: ids });
    expect(courses!.counts).toMatchObject({ created: 2, failed: 0 });
    expect(enrollments!.counts).toMatchObject({ created: 2, skipped: 1, failed: 0 });

    const u1 = (await raw.get<Row>('/v1/students/ext:U1')).body;
    expect(u1).toMatchObject({
      student_number: 'S-001',
      first_name: 'Given U1',
      last_name: 'Family U1',
      preferred_name: 'Annie',
      email: 'u1@school.test',
      grade_level: 7,
      status: 'active',
    });
    // No identifier: the sourcedId is the student number.
    const u2 = (await raw.get<Row>('/v1/students/ext:U2')).body;
    expect(u2).toMatchObject({ student_number: 'U2', grade_level: 0, status: 'inactive' });
    expect((await raw.get('/v1/students/ext:TCH')).status).toBe(404);

    const c1 = (await raw.get<Row>('/v1/courses/ext:class-1')).body;
    expect(c1).toMatchObject({
      code: 'MATH-7A',
      title: 'Class class-1',
      status: 'active',
      start_date: '2026-08-20',
      end_date: '2027-05-30',
    });
    const c2 = (await raw.get<Row>('/v1/courses/ext:class-2')).body;
    expect(c2).toMatchObject({ code: 'class-2', start_date: '2026-08-20', end_date: '2026-12-20' });
    const live = await list('/v1/enrollments');
    expect(live.map((e) => [e.external_id, e.status]).sort()).toEqual([
      ['E1', 'active'],
      ['E2', 'active'],
    ]);
    expect(live.find((e) => e.external_id === 'E1')).toMatchObject({
      student_id: u1.id,
      course_id: c1.id,
    });

    const report = await errorReport(server, token, ids[0]!);
    expect(report.rows).toEqual([
      expect.objectContaining({ row: '', field: 'orgs.csv', code: 'not_mapped' }),
      expect.objectContaining({ row: '', field: 'courses.csv', code: 'not_mapped' }),
      expect.objectContaining({ row: '', field: 'demographics.csv', code: 'not_mapped' }),
      expect.objectContaining({ row: '3', external_id: 'TCH', field: 'role', code: 'not_mapped' }),
    ]);
    const enrollmentReport = await errorReport(server, token, ids[2]!);
    expect(enrollmentReport.rows).toEqual([
      expect.objectContaining({ row: '3', external_id: 'E3', field: 'role', code: 'not_mapped' }),
    ]);
  });

  it('a delta applies what it names (tobedeleted as withdrawals); a later bulk withdraws who is left out', async () => {
    await imported(school());
    // OneRoster 1.1: the role is a column of users.csv.
    const delta = await imported({
      version: '1.1',
      processing: { 'users.csv': 'delta', 'enrollments.csv': 'delta' },
      headers: { 'users.csv': ONEROSTER_1_1_USERS },
      files: {
        'users.csv': [
          user('U2', { role: 'student', status: 'tobedeleted' }),
          user('U3', { role: 'student', status: 'active', identifier: 'S-003' }),
          user('TCH2', { role: 'teacher', status: 'active' }),
        ],
        'enrollments.csv': [{ ...enrollment('E2', 'U2', 'class-2'), status: 'tobedeleted' }],
      },
    });
    expect(delta.map((i) => [i.collection, i.mode, i.status])).toEqual([
      ['students', 'upsert', 'succeeded'],
      ['enrollments', 'upsert', 'succeeded'],
    ]);
    expect(delta[0]!.counts).toMatchObject({ created: 1, updated: 1, skipped: 1, withdrawn: 0 });
    const byId = new Map((await list('/v1/students')).map((s) => [s.external_id, s.status]));
    expect(Object.fromEntries(byId)).toEqual({ U1: 'active', U2: 'withdrawn', U3: 'active' });
    const enrollments = new Map(
      (await list('/v1/enrollments')).map((e) => [e.external_id, e.status]),
    );
    expect(Object.fromEntries(enrollments)).toEqual({ E1: 'active', E2: 'dropped' });

    const bulk = school();
    bulk.files['users.csv'] = [user('U1', { identifier: 'S-001', grades: '07' })];
    bulk.files['roles.csv'] = [role('U1', 'student')];
    bulk.files['enrollments.csv'] = [enrollment('E1', 'U1', 'class-1')];
    // Completed here, still active in the SIS: refused, not reopened.
    const e1 = (await list('/v1/enrollments')).find((e) => e.external_id === 'E1')!;
    expect((await raw.post(`/v1/enrollments/${e1.id}/complete`)).status).toBe(200);
    const [students, , enrolled] = await imported(bulk, 'format=oneroster&confirm=true');
    expect(students!.counts.withdrawn).toBe(1);
    expect(enrolled!.counts).toMatchObject({ failed: 1, withdrawn: 0 });
    const conflict = await errorReport(server, token, enrolled!.id);
    expect(conflict.rows).toEqual([expect.objectContaining({ row: '1', external_id: 'E1' })]);
    expect((await raw.get<Row>(`/v1/enrollments/${e1.id}`)).body.status).toBe('completed');
    const after = new Map((await list('/v1/students')).map((s) => [s.external_id, s.status]));
    expect(Object.fromEntries(after)).toEqual({ U1: 'active', U2: 'withdrawn', U3: 'withdrawn' });
  });

  it('stops the bundle at a failed import: the ones after it fail unrun and write nothing', async () => {
    const seeded = Array.from({ length: 10 }, (_, i) => ({
      external_id: `OLD-${i}`,
      student_number: `OLD-${i}`,
      first_name: 'Old',
      last_name: `Student ${i}`,
    }));
    await batchCaller(server, token)('/v1/students/batch', seeded);
    const [students, courses, enrollments] = await imported(school());
    expect(students).toMatchObject({ status: 'failed' });
    expect(students!.error).toMatch(/change_threshold/);
    for (const later of [courses!, enrollments!]) {
      expect(later).toMatchObject({ status: 'failed', rows_processed: 0 });
      expect(later.error).toBe("Not run: the bundle's users.csv import before it failed.");
    }
    expect(await list('/v1/courses')).toEqual([]);
    expect(await list('/v1/enrollments')).toEqual([]);
    expect((await list('/v1/students')).length).toBe(10);
  });

  it('a dry run counts what the whole bundle would do, enrollments of its own students included, and writes nothing', async () => {
    const eventsBefore = (await eventsOf(server, orgId)).length;
    const all = await imported(school(), 'format=oneroster&dry_run=true');
    expect(all.map((i) => [i.status, i.dry_run])).toEqual([
      ['succeeded', true],
      ['succeeded', true],
      ['succeeded', true],
    ]);
    expect(all.map((i) => i.counts.created)).toEqual([2, 2, 2]);
    expect(all.map((i) => i.counts.failed)).toEqual([0, 0, 0]);
    expect(await list('/v1/students')).toEqual([]);
    expect(await list('/v1/courses')).toEqual([]);
    expect((await eventsOf(server, orgId)).length).toBe(eventsBefore);
  });

  it('reads a bundle whose files sit in a folder, and names the column of a refused row', async () => {
    const spec = school();
    spec.folder = 'export-2026-12-01';
    spec.files['users.csv']!.push(user('U4', { email: 'not-an-address' }));
    spec.files['roles.csv']!.push(role('U4', 'student'));
    const [students] = await imported(spec);
    expect(students!.counts).toMatchObject({ created: 2, failed: 1 });
    const report = await errorReport(server, token, students!.id);
    expect(report.rows).toContainEqual(
      expect.objectContaining({ row: '4', external_id: 'U4', field: 'email' }),
    );
    const noTitle = school();
    noTitle.files['classes.csv'] = [schoolClass('class-9', { title: '' })];
    const [, courses] = await imported(noTitle, 'format=oneroster&confirm=true');
    const classReport = await errorReport(server, token, courses!.id);
    expect(classReport.rows).toEqual([
      expect.objectContaining({ row: '1', external_id: 'class-9', field: 'title' }),
    ]);
  });

  it('refuses a bundle it cannot read, saying what is wrong, and keeps nothing of it', async () => {
    const cases: [() => Promise<RawResponse<unknown>>, number, RegExp][] = [
      [
        () =>
          upload(server, token, 'format=oneroster', 'a,b\n1,2\n', {
            type: 'application/zip',
            name: 'x.zip',
          }),
        400,
        /not a zip/,
      ],
      [() => sendBundle({ ...school(), noManifest: true }), 400, /no manifest\.csv/],
      [() => sendBundle({ ...school(), version: '2.0' }), 400, /oneroster\.version '2\.0'/],
      [
        () => sendBundle({ processing: { 'users.csv': 'bulk' }, files: {} }),
        400,
        /says users\.csv is bulk, but the bundle has no users\.csv/,
      ],
      [
        () => sendBundle({ processing: { 'orgs.csv': 'bulk' }, files: { 'orgs.csv': [] } }),
        400,
        /applies none of users\.csv, classes\.csv, enrollments\.csv/,
      ],
      [
        () => sendBundle(school(), 'format=oneroster&collection=students'),
        400,
        /send no collection/,
      ],
      [() => sendBundle(school(), 'format=oneroster&mode=full'), 400, /send no mode/],
      [() => sendBundle(school(), ''), 202, /./],
    ];
    for (const [send, status, detail] of cases) {
      const res = await send();
      expect(res.status).toBe(status);
      if (status !== 202) expect(problemOf(res).detail).toMatch(detail);
    }
    // Only the last, a zip with no format given, was taken.
    expect((await list('/v1/imports')).length).toBe(3);
  });

  it('needs the write scope of every collection the bundle writes', async () => {
    const { token: narrow } = await server.createToken(orgId, ['imports:write', 'students:write']);
    const res = await sendBundle(school(), 'format=oneroster', narrow);
    expect(res.status).toBe(403);
    expect(problemOf(res).detail).toMatch(/courses:write/);
    const onlyUsers = await sendBundle(
      {
        processing: { 'users.csv': 'bulk', 'roles.csv': 'bulk' },
        files: { 'users.csv': [user('U1')], 'roles.csv': [role('U1', 'student')] },
      },
      'format=oneroster',
      narrow,
    );
    expect(onlyUsers.status).toBe(202);
    expect(onlyUsers.body.bundle!.imports.length).toBe(1);
  });
});

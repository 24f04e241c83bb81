/**
 * External ids through the TypeScript SDK against the real server: a batch upsert by
 * `external_id`, a record read back as `ext:<external_id>`, and a reference filter by ext:.
 */
import { startTestServer, type TestServer } from '@platform/server/testing';
import { createClient, type PlatformClient, PlatformValidationError } from './index';

let server: TestServer;
let sdk: PlatformClient;

beforeAll(async () => {
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL,
    redisUrl: process.env.TEST_REDIS_URL,
  });
  const organization = await server.createOrganization();
  const { token } = await server.createToken(organization.id, ['all']);
  sdk = createClient({ baseUrl: server.url, token });
});

afterAll(async () => {
  await server?.close();
});

const person = (key: string, last: string) => ({
  external_id: key,
  student_number: `N-${key}`,
  first_name: 'Ada',
  last_name: last,
});

it('batchUpsert creates, updates and leaves records by external_id, one result per item', async () => {
  const first = await sdk.students.batchUpsert({
    body: { items: [person('SDK-1', 'One'), person('SDK-2', 'Two')] },
  });
  expect(first.counts).toEqual({ created: 2, updated: 0, unchanged: 0, failed: 0 });

  const second = await sdk.students.batchUpsert({
    body: {
      items: [
        { external_id: 'SDK-1', last_name: 'Renamed' },
        person('SDK-2', 'Two'),
        { external_id: 'SDK-3', first_name: 'No last name' },
      ],
    },
  });
  expect(second.data.map((r) => [r.external_id, r.status])).toEqual([
    ['SDK-1', 'updated'],
    ['SDK-2', 'unchanged'],
    ['SDK-3', 'failed'],
  ]);
  expect(second.data[2]!.error?.errors.map((e) => e.path)).toContain('body.items.2.last_name');

  const one = await sdk.students.retrieve({ params: { id: 'ext:SDK-1' } });
  expect(one).toMatchObject({ id: first.data[0]!.id, last_name: 'Renamed' });
});

it('filters a list by ext: in a reference filter, and refuses a malformed key by name', async () => {
  await sdk.students.create({ body: person('SDK-REF', 'Ref') });
  await sdk.courses.create({ body: { code: 'SDK-C', title: 'SDK', external_id: 'class-sdk' } });
  const enrollment = await sdk.enrollments.create({
    body: { student_id: 'ext:SDK-REF', course_id: 'ext:class-sdk' },
  });
  const page = await sdk.enrollments.list({ student_id: 'ext:SDK-REF' });
  expect(page.data.map((e) => e.id)).toEqual([enrollment.id]);
  const bad = await sdk.enrollments.list({ student_id: 'ext:bad/key' }).catch((e: unknown) => e);
  expect(bad).toBeInstanceOf(PlatformValidationError);
  expect((bad as PlatformValidationError).message).toContain('student_id');
});

/**
 * A mirror that fell behind the feed's retention: `410 cursor_expired` is said plainly and ends
 * the run (exit 3) with the copy untouched; with `--resnapshot-on-expiry` every collection is
 * loaded again from a new export and the copy verifies clean.
 */
import { type Client, createClient } from '@platform/client';
import { ManualClock, startTestServer, type TestServer } from '@platform/server/testing';
import { freshMirrorDatabase, openMirror, runMirrorToEnd } from './support';

jest.setTimeout(120_000);

const DAY = 86_400_000;
let server: TestServer;
let sdk: Client;
let args: string[];
let database: { url: string; drop(): Promise<void> };
const clock = new ManualClock();

beforeAll(async () => {
  server = await startTestServer({ postgresAdminUrl: process.env.TEST_DATABASE_URL, clock });
  const organization = await server.createOrganization();
  const { token } = await server.createToken(organization.id, ['all']);
  sdk = createClient({ baseUrl: server.url, token });
  database = await freshMirrorDatabase();
  args = [
    '--database',
    database.url,
    '--token',
    token,
    '--base-url',
    server.url,
    '--collections',
    'students',
  ];
});

afterAll(async () => {
  await server?.close();
  await database?.drop();
});

async function firstName(id: string): Promise<unknown> {
  const db = await openMirror(database.url);
  try {
    const rows = await db.all<{ first_name: string }>(
      'SELECT "first_name" FROM "students" WHERE "id" = $1'.replace(
        '$1',
        db.dialect.placeholder(0),
      ),
      [id],
    );
    return rows[0]?.first_name;
  } finally {
    await db.close();
  }
}

it('says the cursor expired and stops, then re-snapshots only when told to', async () => {
  const student = await sdk.students.create({
    body: { student_number: 'E-1', first_name: 'Before', last_name: 'Expiry' },
  });
  expect((await runMirrorToEnd([...args, '--once'])).code).toBe(0);
  expect(await firstName(student.id)).toBe('Before');

  // A change the mirror has not read, then 31 days: it is older than the feed keeps.
  await sdk.students.update(student.id, { body: { first_name: 'After' } });
  clock.advance(31 * DAY);

  const expired = await runMirrorToEnd([...args, '--once']);
  expect(expired.output).toMatch(
    /error: the change feed no longer holds the changes after the mirror's cursor \(410 cursor_expired: .*\)\. Run again with --resnapshot-on-expiry to load every collection again from a new export\./,
  );
  expect(expired.code).toBe(3);
  expect(await firstName(student.id)).toBe('Before');

  const again = await runMirrorToEnd([...args, '--once', '--resnapshot-on-expiry']);
  expect(again.output).toMatch(/410 cursor_expired\); loading every collection again/);
  expect(again.output).toMatch(/exporting students from one snapshot/);
  expect(again.code).toBe(0);
  expect(await firstName(student.id)).toBe('After');
  const verify = await runMirrorToEnd([...args, '--verify']);
  expect(verify.output).toMatch(/verify: students matches \(1 rows\)/);
  expect(verify.code).toBe(0);
});

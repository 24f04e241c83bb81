/**
 * The portal's Imports page in Chromium against the real server: a member uploads a CSV, tries it
 * as a dry run (nothing written), imports it, downloads its error report, and confirms a full
 * import past its change threshold, and imports a OneRoster bundle; the page has no axe-core
 * violations.
 */
import { readFile } from 'node:fs/promises';
import { startTestServer, type TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ZipFile } from 'yazl';
import { allViolations, launchChromium, loopbackContext, expectPortalBuilt } from './browser';

const EMAIL = 'imports@portal-school.test';
const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let token: string;
const refused: string[] = [];

beforeAll(async () => {
  expectPortalBuilt();
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
  });
  const organization = await server.createOrganization({ name: 'Import School' });
  await server.createUser(organization.id, EMAIL, PASSWORD);
  ({ token } = await server.createToken(organization.id, ['all']));
  browser = await launchChromium();
  context = await loopbackContext(browser, refused);
  page = await context.newPage();
}, 120_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.close();
});

afterEach(() => {
  expect(refused).toEqual([]);
});

const studentsCsv = (rows: string[]) =>
  Buffer.from(['external_id,student_number,first_name,last_name,email', ...rows].join('\n'));

async function students(): Promise<{ external_id: string; status: string }[]> {
  const res = await fetch(`${server.url}/v1/students?per_page=100`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  return ((await res.json()) as { data: { external_id: string; status: string }[] }).data;
}

test('a dry run writes nothing; the import applies the file and reports its refused rows', async () => {
  await page.goto(`${server.url}/portal/imports`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/oauth\/interaction\//);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Imports', level: 1 }).waitFor();
  await page.getByText('No imports yet.').waitFor();

  await page.getByLabel('Collection').selectOption('students');
  await page.getByLabel('File (CSV or NDJSON)').setInputFiles({
    name: 'students.csv',
    mimeType: 'text/csv',
    buffer: studentsCsv([
      'P-1,PN-1,Ada,Lovelace,',
      'P-2,PN-2,Alan,Turing,',
      'P-3,PN-3,Grace,Hopper,not-an-email',
    ]),
  });
  await expectAccessible('imports, file chosen');
  await page.getByRole('button', { name: 'Dry run' }).click();
  await page
    .getByText(
      'Students, dry run, nothing written: 2 would create, 0 would update, 0 unchanged, 1 refused.',
    )
    .waitFor({ timeout: 20_000 });
  expect(await students()).toEqual([]);

  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page
    .getByText('Students imported: 2 created, 0 updated, 0 unchanged, 1 refused.')
    .waitFor({ timeout: 20_000 });
  expect((await students()).map((s) => s.external_id).sort()).toEqual(['P-1', 'P-2']);
  await expectAccessible('imports, one applied');

  const report = page.getByRole('button', { name: /^Error report/ }).first();
  const [file] = await Promise.all([page.waitForEvent('download'), report.click()]);
  expect(file.suggestedFilename()).toMatch(/^imp_[0-9A-Z]+-errors\.csv$/);
  const lines = (await readFile(await file.path(), 'utf8')).trim().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toMatch(/^3,P-3,email,/);
}, 60_000);

test('a full import past its change threshold stops, and is applied once confirmed', async () => {
  await page.getByLabel('Mode').selectOption('full');
  await page.getByLabel('Stop if it would withdraw more than (%)').fill('10');
  await page.getByLabel('File (CSV or NDJSON)').setInputFiles({
    name: 'students.csv',
    mimeType: 'text/csv',
    buffer: studentsCsv(['P-1,PN-1,Ada,Lovelace,']),
  });
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page
    .getByText(/would withdraw 1 of the 2 students/)
    .first()
    .waitFor({ timeout: 20_000 });
  expect((await students()).every((s) => s.status === 'active')).toBe(true);
  await expectAccessible('imports, threshold passed');

  await page.getByRole('button', { name: 'Confirm and import anyway' }).click();
  await page
    .getByText('Students imported: 0 created, 0 updated, 1 unchanged, 0 refused, 1 withdrawn.')
    .waitFor({ timeout: 20_000 });
  const after = new Map((await students()).map((s) => [s.external_id, s.status]));
  expect(after.get('P-2')).toBe('withdrawn');
  expect(after.get('P-1')).toBe('active');
}, 60_000);

test('a OneRoster bundle runs as its imports, each reported, teachers not imported', async () => {
  await page.getByLabel('Collection').selectOption('oneroster');
  await page.getByLabel('Bundle (zip)').setInputFiles({
    name: 'roster.zip',
    mimeType: 'application/zip',
    buffer: await rosterZip(),
  });
  await expectAccessible('imports, bundle chosen');
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page
    .getByText(
      'Students (OneRoster users.csv) imported: 1 created, 0 updated, 0 unchanged, 0 refused, 1 not imported.',
    )
    .waitFor({ timeout: 20_000 });
  await page
    .getByText(/^Enrollments \(OneRoster enrollments\.csv\) imported: 1 created/)
    .waitFor({ timeout: 20_000 });
  expect((await students()).map((s) => s.external_id)).toContain('OR-1');
}, 60_000);

/** A OneRoster 1.2 delta bundle: a student, a teacher, a class, the student's enrollment. */
async function rosterZip(): Promise<Buffer> {
  const zip = new ZipFile();
  const files: Record<string, string[]> = {
    'manifest.csv': [
      'propertyName,value',
      'manifest.version,1.0',
      'oneroster.version,1.2',
      'file.classes,delta',
      'file.users,delta',
      'file.roles,delta',
      'file.enrollments,delta',
    ],
    'classes.csv': [
      'sourcedId,status,dateLastModified,title,grades,courseSourcedId,classCode,classType,location,schoolSourcedId,termSourcedIds,subjects,subjectCodes,periods',
      'CL-1,active,2026-12-01,Algebra,,C-1,ALG-1,scheduled,,SCH-1,,,,',
    ],
    'users.csv': [
      'sourcedId,status,dateLastModified,enabledUser,username,userIds,givenName,familyName,middleName,identifier,email,sms,phone,agentSourcedIds,grades,password,userMasterIdentifier,resourceSourcedIds,preferredGivenName,preferredMiddleName,preferredFamilyName,primaryOrgSourcedId,pronouns',
      'OR-1,active,2026-12-01,true,ada,,Ada,Byron,,OR-N1,,,,,09,,,,,,,SCH-1,',
      'OR-T,active,2026-12-01,true,ms.t,,Tess,Teacher,,,,,,,,,,,,,,SCH-1,',
    ],
    'roles.csv': [
      'sourcedId,status,dateLastModified,userSourcedId,roleType,role,beginDate,endDate,orgSourcedId,userProfileSourcedId',
      'R-1,active,2026-12-01,OR-1,primary,student,,,SCH-1,',
      'R-2,active,2026-12-01,OR-T,primary,teacher,,,SCH-1,',
    ],
    'enrollments.csv': [
      'sourcedId,status,dateLastModified,classSourcedId,schoolSourcedId,userSourcedId,role,primary,beginDate,endDate',
      'EN-1,active,2026-12-01,CL-1,SCH-1,OR-1,student,,,',
    ],
  };
  for (const [name, lines] of Object.entries(files)) {
    zip.addBuffer(Buffer.from(lines.join('\n') + '\n'), name);
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function expectAccessible(name: string): Promise<void> {
  expect({ page: name, violations: await allViolations(page) }).toEqual({
    page: name,
    violations: [],
  });
}

import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { prepareDatabase } from '../src/testing';

const run = promisify(execFile);
const CLI = path.join(__dirname, '..', 'dist', 'cli', 'main.js');

/** Runs the built CLI, as `pnpm platform` does, against the test database. */
async function platform(databaseUrl: string, ...args: string[]) {
  try {
    const { stdout } = await run(process.execPath, [CLI, ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
    });
    return { code: 0, stdout };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('pnpm platform (the admin CLI)', () => {
  let db: Awaited<ReturnType<typeof prepareDatabase>>;

  beforeAll(async () => {
    db = await prepareDatabase(
      process.env.TEST_DATABASE_URL ? { postgresAdminUrl: process.env.TEST_DATABASE_URL } : {},
    );
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

  it('seeds the demo organization with students and a working token', async () => {
    const seeded = JSON.parse(
      (await platform(db.databaseUrl, 'seed', '--students', '30', '--json')).stdout,
    );
    expect(seeded).toMatchObject({
      organization_id: 'org_01JC0DEM0RG000000000000000',
      organization_created: true,
      students_created: 30,
    });
    const again = JSON.parse((await platform(db.databaseUrl, 'seed', '--json')).stdout);
    expect(again).toMatchObject({ organization_created: false, students_created: 0 });
    expect(again.token).not.toBe(seeded.token);
  });
});

/**
 * The admin CLI as a process: the wiring from `pnpm platform` (bin/platform.js) and
 * dist/cli/main.js to the commands. What the commands do is cli.e2e-spec.ts's and
 * cli-orgs.e2e-spec.ts's, which run them in Jest's process.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { prepareDatabase } from '../src/testing';
import { databaseOptions } from './support/server';

const run = promisify(execFile);
const SERVER = path.join(__dirname, '..');
const CLI = path.join(SERVER, 'dist', 'cli', 'main.js');

describe('the CLI binary', () => {
  let db: Awaited<ReturnType<typeof prepareDatabase>>;

  beforeAll(async () => {
    db = await prepareDatabase(databaseOptions());
  });
  afterAll(() => db.drop());

  it('`pnpm platform … --json` prints only JSON and exits 0; a refused command exits 1 with the error on stderr', async () => {
    const env = { ...process.env, DATABASE_URL: db.databaseUrl };
    // As docs/operations.md runs it: pnpm, the turbo build (cached when up to date), then the CLI. Any
    // banner or build output on stdout would break the JSON.
    const created = await run(
      'pnpm',
      ['platform', 'orgs:create', '--name', 'Jq School', '--json'],
      {
        cwd: path.join(SERVER, '..', '..'),
        env,
      },
    );
    const org = JSON.parse(created.stdout);
    expect(org).toMatchObject({ object: 'organization', name: 'Jq School' });

    // The built entry on its own: the command's error on stderr, nothing on stdout, exit code 1.
    const refused = await run(process.execPath, [CLI, 'orgs:show', '--id', 'org_nope'], {
      env,
    }).then(
      () => ({ code: 0, stdout: '', stderr: '' }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(refused).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'error: No organization org_nope\n',
    });
  }, 180_000);
});

/**
 * platform-sdk-live end to end, as a suite uses it: the real CLI starts a real server, and a
 * command run under it uses every fixture; then the JUnit → CI report path, including the runs
 * that must count as broken rather than as 0 passed / 0 failed.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { databaseLabel } = require('../src/fixtures');

const BIN = path.join(__dirname, '..', 'bin', 'platform-sdk-live.js');
const FIXTURES = path.join(__dirname, 'fixtures');

let tmp;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-live-test-'));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Runs the CLI; resolves with its exit code and output. */
function cli(args, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

function reports(dir) {
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')));
}

/** The environment is the documented contract, and the fixtures file says the same. */
function expectDocumentedEnvironment(probe) {
  expect(Object.keys(probe.env).sort()).toEqual([
    'PLATFORM_BASE_URL',
    'PLATFORM_CONTROL_URL',
    'PLATFORM_FIXTURES',
    'PLATFORM_LIMITED_RATE_LIMIT',
    'PLATFORM_LIMITED_TOKEN',
    'PLATFORM_MEMBER_EMAIL',
    'PLATFORM_MEMBER_PASSWORD',
    'PLATFORM_MEMBER_TOKEN',
    'PLATFORM_OAUTH_CLIENT_ID',
    'PLATFORM_OAUTH_CLIENT_SECRET',
    'PLATFORM_OAUTH_REFRESH_TOKENS',
    'PLATFORM_OAUTH_TOKEN_URL',
    'PLATFORM_READONLY_TOKEN',
    'PLATFORM_TOKEN',
  ]);
  expect(probe.env.PLATFORM_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(probe.fixtures).toMatchObject({
    base_url: probe.env.PLATFORM_BASE_URL,
    database: databaseLabel(process.env),
    token: probe.env.PLATFORM_TOKEN,
    limited_token: probe.env.PLATFORM_LIMITED_TOKEN,
    limited_rate_limit: 5,
    oauth: {
      client_id: probe.env.PLATFORM_OAUTH_CLIENT_ID,
      token_url: `${probe.env.PLATFORM_BASE_URL}/oauth/token`,
    },
  });
  expect(probe.fixtures.oauth.refresh_tokens).toHaveLength(4);
  expect(new Set(probe.fixtures.oauth.refresh_tokens).size).toBe(4);
}

describe('platform-sdk-live', () => {
  it('runs the command against a live server with working fixtures in its environment', async () => {
    const out = path.join(tmp, 'probe.json');
    const run = await cli(['--', process.execPath, path.join(FIXTURES, 'probe.js'), out], {
      // CI's own report directory is not part of the contract the probe lists.
      PLATFORM_TEST_REPORT_DIR: undefined,
    });
    expect(run).toMatchObject({ code: 0 });
    const probe = JSON.parse(fs.readFileSync(out, 'utf8'));

    expectDocumentedEnvironment(probe);

    // The full PAT answers GET /v1/token with every scope; the read-only one holds one scope.
    expect(probe.token.status).toBe(200);
    expect(probe.token.body).toMatchObject({
      type: 'personal_access_token',
      organization_id: probe.fixtures.organization_id,
    });
    expect(probe.token.body.scopes).toEqual(probe.fixtures.oauth.scopes);
    expect(probe.readonly.token.body.scopes).toEqual(['students:read']);
    expect(probe.readonly.courses).toBe(403);

    // The member token acts for an admin of A, who can sign in with the fixture password.
    expect(probe.member.user).toMatchObject({
      object: 'member',
      email: probe.env.PLATFORM_MEMBER_EMAIL,
      role: 'admin',
      organization_id: probe.fixtures.organization_id,
    });
    expect(probe.fixtures.member).toMatchObject({
      token: probe.env.PLATFORM_MEMBER_TOKEN,
      password: probe.env.PLATFORM_MEMBER_PASSWORD,
    });
    expect(probe.member.operator).toBe(403);

    // Organization B: the limit, then 429 with Retry-After; organization A goes on.
    expect(probe.limited.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(Number(probe.limited[5].retryAfter)).toBeGreaterThan(0);
    expect(probe.afterLimited).toBe(200);

    // A refresh token from the code flow is accepted, rotated, and acts for a member of A.
    expect(probe.refresh).toMatchObject({
      status: 200,
      rotated: true,
      tokenInfo: {
        type: 'oauth_access_token',
        organization_id: probe.fixtures.organization_id,
        client_id: probe.env.PLATFORM_OAUTH_CLIENT_ID,
        user_id: expect.stringMatching(/^usr_/),
      },
    });
    expect(probe.secondRefresh).toBe(200);
    expect(probe.clientCredentials).toEqual({ status: 200, scope: 'students:read' });

    // The fixtures file (it holds secrets) is gone after the run.
    expect(fs.existsSync(probe.env.PLATFORM_FIXTURES)).toBe(false);
  });

  it('takes the server away and brings it back on the same port and database', async () => {
    const out = path.join(tmp, 'restart.json');
    const probe = path.join(FIXTURES, 'restart-probe.js');
    const run = await cli(['--', process.execPath, probe, out]);
    expect(run).toMatchObject({ code: 0 });
    const seen = JSON.parse(fs.readFileSync(out, 'utf8'));
    expect(seen.created.status).toBe(201);
    expect(seen.restart.status).toBe(202);
    // While down nothing listens, and a second restart is refused rather than queued.
    expect(seen.during).toEqual({ state: 'down', read: { error: 'ECONNREFUSED' } });
    expect(seen.again).toBe(409);
    expect(seen.downForMs).toBeGreaterThan(1000);
    // Back up: the same token reads what was written before the restart.
    expect(seen.after).toMatchObject({ status: 200, body: { id: seen.created.body.id } });
    expect(seen.badDown).toBe(400);
  });

  it("writes the JUnit file's counts to the CI report and exits with the command's code", async () => {
    const junit = path.join(tmp, 'junit.xml');
    const reportDir = path.join(tmp, 'reports');
    const copy = `require('fs').copyFileSync(${JSON.stringify(path.join(FIXTURES, 'pytest-junit.xml'))}, process.env.PLATFORM_JUNIT_FILE); process.exit(3)`;
    const run = await cli(
      ['--junit', junit, '--package', 'client-python', '--', process.execPath, '-e', copy],
      { PLATFORM_TEST_REPORT_DIR: reportDir },
    );
    expect(run.code).toBe(3);
    expect(reports(reportDir)).toEqual([
      {
        package: 'client-python',
        database: databaseLabel(process.env),
        passed: 3,
        failed: 2,
        brokenSuites: 0,
      },
    ]);
    expect(run.stderr).toContain('client-python');
    expect(run.stderr).toContain('3 passed, 2 failed');
  });

  it('counts a run that wrote no JUnit file as a broken suite and fails, even on exit code 0', async () => {
    const junit = path.join(tmp, 'junit.xml');
    const reportDir = path.join(tmp, 'reports');
    // A passing file from an earlier run must not stand in for this one.
    fs.copyFileSync(path.join(FIXTURES, 'pytest-junit.xml'), junit);
    const run = await cli(['--junit', junit, '--', process.execPath, '-e', 'process.exit(0)'], {
      PLATFORM_TEST_REPORT_DIR: reportDir,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('wrote no JUnit file');
    expect(reports(reportDir)).toEqual([
      {
        package: process.cwd(),
        database: databaseLabel(process.env),
        passed: 0,
        failed: 0,
        brokenSuites: 1,
      },
    ]);
  });

  it('refuses a command line without a command', async () => {
    const run = await cli(['--junit', 'x.xml']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no command given');
  });
});

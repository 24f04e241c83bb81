const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { TEST_HOST_ADDRESS, takeViolations } = require('../index');
const { watchSocketConnects } = require('../watch-sockets');

describe('the hermetic guard in this process', () => {
  let server;
  let port;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('ok'));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = server.address().port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  test('opens loopback sockets and never one to an outside address', async () => {
    const sockets = watchSocketConnects();
    try {
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('ok');
      await expect(fetch('https://hooks.school.test/webhooks')).rejects.toThrow();
      const viaAgent = await new Promise((resolve) =>
        https
          .request('https://hooks.school.test/webhooks', { method: 'POST' })
          .on('error', resolve)
          .end(),
      );
      expect(viaAgent).toMatchObject({ code: 'EHERMETIC' });
      const error = await new Promise((resolve) =>
        net.connect(443, TEST_HOST_ADDRESS).on('error', resolve),
      );
      expect(error).toMatchObject({ code: 'EHERMETIC' });
      expect(error.message).toMatch(/may only reach loopback/);
    } finally {
      sockets.restore();
    }
    expect(sockets.seen).toContain('127.0.0.1');
    expect(sockets.seen.filter((address) => address !== '127.0.0.1')).toEqual([]);
    // Every refusal was recorded (and taken, so this test passes).
    expect(takeViolations().map((v) => v.target)).toEqual([
      TEST_HOST_ADDRESS,
      TEST_HOST_ADDRESS,
      TEST_HOST_ADDRESS,
    ]);
  });

  test('*.test names look public; other names do not resolve at all', async () => {
    const dns = require('node:dns');
    expect(await dns.promises.lookup('hooks.school.test', { all: true })).toEqual([
      { address: TEST_HOST_ADDRESS, family: 6 },
    ]);
    expect(await dns.promises.lookup('api.localhost')).toEqual({ address: '127.0.0.1', family: 4 });
    await expect(dns.promises.lookup('example.com')).rejects.toMatchObject({ code: 'EHERMETIC' });
    expect(takeViolations().map((v) => v.target)).toEqual(['example.com']);
  });
});

/** Runs the fixture suite in a Jest of its own and returns each test's outcome. */
async function runFixtures(extraArgs) {
  const outputFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hermetic-')), 'out.json');
  const env = { ...process.env };
  // The fixture run is a separate run: its own violation log, and its deliberately failing
  // tests must not be added to this run's CI totals.
  for (const key of ['PLATFORM_HERMETIC_LOG_DIR', 'PLATFORM_TEST_REPORT_DIR', 'JEST_WORKER_ID'])
    delete env[key];
  const child = spawn(
    process.execPath,
    [
      require.resolve('jest/bin/jest'),
      '--config',
      path.join(__dirname, 'fixtures', 'jest.config.js'),
      '--json',
      `--outputFile=${outputFile}`,
      ...extraArgs,
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.stdout.resume();
  const code = await new Promise((resolve) => child.on('close', resolve));
  const report = JSON.parse(fs.readFileSync(outputFile, 'utf8'));
  const outcomes = {};
  for (const file of report.testResults) {
    for (const t of file.assertionResults) {
      outcomes[t.title] = { status: t.status, message: t.failureMessages.join('\n') };
    }
  }
  return { code, outcomes, stderr };
}

describe.each([
  ['in band', ['--runInBand']],
  ['in workers', ['--maxWorkers=2']],
])('a Jest run with the shared preset (%s)', (_mode, args) => {
  let run;
  beforeAll(async () => {
    run = await runFixtures(args);
  });

  test('fails, and fails each test that reached outside, even when it swallowed the error', () => {
    expect(run.code).not.toBe(0);
    for (const title of [
      'fetch to a *.test host',
      'https.request through a keep-alive agent',
      'a raw socket to an outside IP literal',
      'a DNS lookup of an outside name',
      'a DNS query straight to a name server',
      'a child process connecting outside',
    ]) {
      expect({ title, ...run.outcomes[title] }).toMatchObject({
        title,
        status: 'failed',
        message: expect.stringMatching(/hermetic: this test tried to reach outside loopback/),
      });
    }
    expect(run.outcomes['a child process connecting outside'].message).toContain(TEST_HOST_ADDRESS);
    expect(run.stderr).toMatch(/!!! hermetic: refused connection to 3ffe:ffff::7e57/);
  });

  test('passes loopback traffic and a refusal the test expected', () => {
    expect(run.outcomes['connects to a loopback server by address and by name']).toMatchObject({
      status: 'passed',
    });
    expect(run.outcomes['an expected refusal, taken by the test']).toMatchObject({
      status: 'passed',
    });
  });
});

describe('benchmarks and scripts', () => {
  const ROOT = path.resolve(__dirname, '..', '..', '..');
  const entryPoints = [
    ...fs
      .readdirSync(path.join(ROOT, 'bench'))
      .filter((name) => name.endsWith('.bench.js'))
      .map((name) => path.join('bench', name)),
    path.join('scripts', 'scale-out.js'),
  ];

  // By package name, or by path where the file's package does not depend on it (the root).
  test.each(entryPoints)('%s enforces the guard for its whole run', (file) => {
    expect(fs.readFileSync(path.join(ROOT, file), 'utf8')).toMatch(
      /require\('(?:@platform\/hermetic|\.\.\/tooling\/hermetic)'\)\.enforceForRun\(\)/,
    );
  });

  test('a run that enforces the guard exits non-zero when a child reached outside', () => {
    const { spawnSync } = require('node:child_process');
    const env = { ...process.env };
    delete env.PLATFORM_HERMETIC_LOG_DIR;
    const script = `
      require(${JSON.stringify(path.join(__dirname, '..', 'index.js'))}).enforceForRun();
      require('node:child_process').spawnSync(process.execPath, ['-e',
        "require('node:net').connect(443, '${TEST_HOST_ADDRESS}').on('error', () => {})"]);
    `;
    const run = spawnSync(process.execPath, ['-e', script], { env, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /this run tried to reach outside loopback:\n {2}- connection to 3ffe/,
    );
  });
});

'use strict';
/**
 * platform-conformance [--only typescript,python,python-async,php]
 *
 * Puts each SDK through every scenario of conformance/http/scenarios.json with its own test
 * runner (Jest, pytest, PHPUnit), prints one count per SDK, writes one report per SDK to
 * $PLATFORM_TEST_REPORT_DIR (CI's "N passed, N failed"), and exits non-zero when any scenario
 * failed in any SDK or an SDK ran fewer scenarios than the file holds.
 */
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { reportFromJUnit, writeReport } = require('@platform/sdk-live');
const { SCENARIOS_FILE } = require('./server');

const ROOT = path.resolve(__dirname, '../../..');

/** Each SDK's runner: how to start it and where it leaves its counts. */
const SDKS = {
  typescript: {
    cwd: path.join(ROOT, 'packages/client'),
    command: (out) => [
      process.execPath,
      require.resolve('jest/bin/jest', { paths: [path.join(ROOT, 'packages/client')] }),
      '-c',
      'jest.conformance.config.js',
      '--json',
      `--outputFile=${out}`,
    ],
    format: 'jest',
  },
  python: {
    cwd: path.join(ROOT, 'packages/client-python'),
    command: (out) => [
      'python3',
      '-m',
      'pytest',
      '-q',
      '-p',
      'no:cacheprovider',
      'tests/conformance/test_conformance.py',
      `--junitxml=${out}`,
    ],
    format: 'junit',
  },
  // AsyncPlatformClient on httpx (the optional extra): a Python that has it, Debian's
  // python3-httpx (scripts/sdk-toolchains.sh) when the one on PATH does not.
  'python-async': {
    cwd: path.join(ROOT, 'packages/client-python'),
    command: (out, env) => [
      pythonWith(['pytest', 'httpx'], env),
      '-m',
      'pytest',
      '-q',
      '-p',
      'no:cacheprovider',
      'tests/conformance/test_conformance_async.py',
      `--junitxml=${out}`,
    ],
    format: 'junit',
  },
  php: {
    cwd: path.join(ROOT, 'packages/client-php'),
    before: ['composer', 'dump-autoload', '--dev', '--quiet'],
    command: (out) => ['phpunit', '--testsuite', 'conformance', '--log-junit', out],
    format: 'junit',
  },
};

/** The first Python that imports every module named: $CONFORMANCE_PYTHON, python3, Debian's. */
function pythonWith(modules, env) {
  const candidates = [env.CONFORMANCE_PYTHON, 'python3', '/usr/bin/python3'].filter(Boolean);
  const found = candidates.find(
    (python) =>
      spawnSync(python, ['-c', `import ${modules.join(', ')}`], { stdio: 'ignore' }).status === 0,
  );
  return found ?? candidates[0];
}

function run([command, ...args], options) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', ...options });
    child.on('error', (error) => {
      process.stderr.write(`platform-conformance: could not run ${command}: ${error.message}\n`);
      resolve(127);
    });
    child.on('exit', (code, signal) => resolve(signal ? 1 : (code ?? 1)));
  });
}

/** `{passed, failed, brokenSuites}` of one SDK's run. */
function countsOf(sdk, file, exitCode) {
  if (sdk.format === 'jest') {
    try {
      const result = JSON.parse(fs.readFileSync(file, 'utf8'));
      const broken =
        result.numRuntimeErrorTestSuites > 0 || (exitCode !== 0 && result.numFailedTests === 0);
      return {
        passed: result.numPassedTests,
        failed: result.numFailedTests,
        brokenSuites: broken ? 1 : 0,
      };
    } catch {
      return { passed: 0, failed: 0, brokenSuites: 1 };
    }
  }
  const { report } = reportFromJUnit({ file, packageName: '', exitCode });
  return { passed: report.passed, failed: report.failed, brokenSuites: report.brokenSuites };
}

async function main(argv, env = process.env) {
  const { values } = parseArgs({ args: argv, options: { only: { type: 'string' } } });
  const names = values.only ? values.only.split(',') : Object.keys(SDKS);
  const unknown = names.filter((name) => !(name in SDKS));
  if (unknown.length) {
    process.stderr.write(
      `platform-conformance: unknown SDK ${unknown.join(', ')}; known: ${Object.keys(SDKS).join(', ')}\n`,
    );
    return 2;
  }
  const expected = JSON.parse(fs.readFileSync(SCENARIOS_FILE, 'utf8')).scenarios.length;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-conformance-'));
  // The runners' own reporters must not count these runs a second time under their package.
  const childEnv = { ...env, PYTHONDONTWRITEBYTECODE: '1', NODE: process.execPath };
  delete childEnv.PLATFORM_TEST_REPORT_DIR;
  const rows = [];
  try {
    for (const name of names) {
      const sdk = SDKS[name];
      const out = path.join(dir, `${name}.${sdk.format === 'jest' ? 'json' : 'xml'}`);
      process.stdout.write(`\n--- conformance: ${name}\n`);
      let code = sdk.before ? await run(sdk.before, { cwd: sdk.cwd, env: childEnv }) : 0;
      if (code === 0) code = await run(sdk.command(out, childEnv), { cwd: sdk.cwd, env: childEnv });
      const counts = countsOf(sdk, out, code);
      const ran = counts.passed + counts.failed;
      const missing = ran < expected && !counts.brokenSuites ? expected - ran : 0;
      rows.push({ name, ...counts, missing });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(
    `\nconformance: ${expected} scenarios (${path.relative(ROOT, SCENARIOS_FILE)})\n`,
  );
  let status = 0;
  for (const row of rows) {
    const notes = [
      row.brokenSuites ? 'the runner did not finish' : '',
      row.missing ? `${row.missing} scenario(s) not run` : '',
    ].filter(Boolean);
    process.stdout.write(
      `  ${row.name.padEnd(13)} ${row.passed} passed, ${row.failed} failed${notes.length ? ` (${notes.join('; ')})` : ''}\n`,
    );
    if (row.failed || row.brokenSuites || row.missing) status = 1;
    if (env.PLATFORM_TEST_REPORT_DIR) {
      writeReport(
        {
          package: `conformance-${row.name}`,
          database: 'scripted',
          passed: row.passed,
          failed: row.failed + row.missing,
          brokenSuites: row.brokenSuites,
        },
        env.PLATFORM_TEST_REPORT_DIR,
      );
    }
  }
  return status;
}

module.exports = { main, SDKS };

'use strict';
/**
 * platform-sdk-live [options] -- <command…>
 *
 * Starts a real server on loopback (SQLite; PostgreSQL when TEST_DATABASE_URL is set; Redis when
 * TEST_REDIS_URL is), creates the fixtures, runs the command with them in its environment,
 * shuts the server down, and exits with the command's code. See ../README.md.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const {
  DEFAULT_LIMITED_RATE_LIMIT,
  DEFAULT_REFRESH_TOKENS,
  createFixtures,
  fixtureEnv,
  startServer,
  writeFixturesFile,
} = require('./fixtures');
const { startControl } = require('./control');
const { reportFromJUnit, writeReport } = require('./junit');

const USAGE = `usage: platform-sdk-live [options] -- <command> [args…]

Runs <command> against a real Platform server on loopback, with fixtures in its environment
(PLATFORM_BASE_URL, PLATFORM_TOKEN, PLATFORM_READONLY_TOKEN, PLATFORM_LIMITED_TOKEN,
PLATFORM_LIMITED_RATE_LIMIT, PLATFORM_OAUTH_CLIENT_ID, PLATFORM_OAUTH_CLIENT_SECRET,
PLATFORM_OAUTH_REFRESH_TOKENS, PLATFORM_OAUTH_TOKEN_URL, PLATFORM_FIXTURES), and exits with its code.
SQLite by default; PostgreSQL when TEST_DATABASE_URL is set; Redis too when TEST_REDIS_URL is.

options:
  --junit FILE              the JUnit XML the command writes (also in PLATFORM_JUNIT_FILE); its
                            counts go to $PLATFORM_TEST_REPORT_DIR for CI's summary. Missing,
                            unreadable or empty counts as a failed run.
  --package NAME            the report's package label (default: the current directory)
  --limited-rate-limit N    organization B's requests per minute (default ${DEFAULT_LIMITED_RATE_LIMIT})
  --refresh-tokens N        how many fresh refresh tokens to issue (default ${DEFAULT_REFRESH_TOKENS})
  --server-log FILE         write the server's log lines (info) to FILE
  -h, --help                this text`;

function log(message) {
  process.stderr.write(`platform-sdk-live: ${message}\n`);
}

function positiveInt(name, value, fallback) {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw new UsageError(`${name} must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

class UsageError extends Error {}

function parse(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        junit: { type: 'string' },
        package: { type: 'string' },
        'limited-rate-limit': { type: 'string' },
        'refresh-tokens': { type: 'string' },
        'server-log': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(error.message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (positionals.length === 0) throw new UsageError('no command given (after --)');
  return {
    command: positionals,
    junit: values.junit === undefined ? undefined : path.resolve(values.junit),
    packageName: values.package ?? process.cwd(),
    limitedRateLimit: positiveInt('--limited-rate-limit', values['limited-rate-limit'], undefined),
    refreshTokens: positiveInt('--refresh-tokens', values['refresh-tokens'], undefined),
    serverLog: values['server-log'],
  };
}

/** Runs the command with inherited stdio; resolves with its exit code (128+n for signal n). */
function run(command, env) {
  return new Promise((resolve) => {
    const child = spawn(command[0], command.slice(1), { env, stdio: 'inherit' });
    const forward = (signal) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    const done = (code) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code);
    };
    child.on('error', (error) => {
      log(`could not run ${command[0]}: ${error.message}`);
      done(127);
    });
    child.on('exit', (code, signal) => {
      if (signal) done(128 + (require('node:os').constants.signals[signal] ?? 0));
      else done(code ?? 1);
    });
  });
}

/** Starts the server, creates the fixtures, runs the command; always closes the server. */
async function runWithServer(options, env, logDestination) {
  const started = Date.now();
  const server = await startServer({ env, logDestination });
  let fixturesFile;
  let control;
  try {
    const fixtures = await createFixtures(server, {
      env,
      ...(options.limitedRateLimit && { limitedRateLimit: options.limitedRateLimit }),
      ...(options.refreshTokens && { refreshTokens: options.refreshTokens }),
    });
    fixturesFile = writeFixturesFile(fixtures);
    control = await startControl(server, log);
    log(
      `server on ${server.url} (${fixtures.database}), fixtures ready in ${Date.now() - started} ms; running: ${options.command.join(' ')}`,
    );
    return await run(options.command, {
      ...env,
      ...fixtureEnv(fixtures, fixturesFile.file),
      PLATFORM_CONTROL_URL: control.url,
      ...(options.junit && { PLATFORM_JUNIT_FILE: options.junit }),
    });
  } finally {
    fixturesFile?.remove();
    try {
      await control?.close();
    } finally {
      await server.close();
    }
  }
}

/** The whole run; resolves with the exit code. */
async function main(argv, env = process.env) {
  let options;
  try {
    options = parse(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`platform-sdk-live: ${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  // A stale file from an earlier run must never be counted as this run's result.
  if (options.junit) fs.rmSync(options.junit, { force: true });

  const logStream = options.serverLog ? fs.createWriteStream(options.serverLog) : undefined;
  let exitCode;
  try {
    exitCode = await runWithServer(options, env, logStream);
  } catch (error) {
    // The report below is still written: a run that never started is a broken suite.
    log(`the live server or its fixtures failed: ${error.stack ?? error}`);
    exitCode = 1;
  } finally {
    logStream?.end();
  }

  if (options.junit) {
    const { report, problem } = reportFromJUnit({
      file: options.junit,
      packageName: options.packageName,
      exitCode,
      env,
    });
    if (problem) log(`${options.junit}: ${problem}: counted as a broken suite`);
    log(
      `${path.basename(report.package)} (${report.database}): ${report.passed} passed, ${report.failed} failed${report.brokenSuites ? ', the suite is broken' : ''}`,
    );
    if (env.PLATFORM_TEST_REPORT_DIR) writeReport(report, env.PLATFORM_TEST_REPORT_DIR);
    if (exitCode === 0 && (report.failed > 0 || report.brokenSuites > 0)) exitCode = 1;
  }
  return exitCode;
}

module.exports = { main, parse, USAGE };

'use strict';
/**
 * The students-list benchmark's setup (students-list.bench.js): the database, migrated and seeded
 * by the server's CLI, and the server, the bare baseline and the peer started and ready. `context`
 * is the run's `{ config, processes, log }` (lib/list-config.js, lib/processes.js).
 */
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { BenchError } = require('./bench-error');
const { serverNodeFlags } = require('./harness');
const {
  REPO_ROOT,
  SERVER_MAIN,
  CLI_MAIN,
  BARE_MAIN,
  PEER_MAIN,
  PROFILER_PRELOAD,
  STUDENTS,
  RATE_LIMIT_PER_MINUTE,
} = require('./list-config');

/** The server's own configuration variables (apps/server/src/config/env.ts): never inherited. */
const SERVER_ENV_KEYS = [
  'NODE_ENV',
  'HOST',
  'PORT',
  'DATABASE_URL',
  'DATABASE_MIGRATE_ON_START',
  'REDIS_URL',
  'WEBHOOK_SECRETS_KEY',
  'LOG_LEVEL',
  'PUBLIC_URL',
  'RATE_LIMIT_DEFAULT',
  'RATE_LIMIT_ANONYMOUS',
  'TRUST_PROXY',
  'DEV_BOOTSTRAP',
];

function childEnv(extra) {
  const env = { ...process.env };
  for (const key of SERVER_ENV_KEYS) delete env[key];
  return { ...env, ...extra };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * The server's database settings for the CLI and the server (the same for both): the SQLite
 * file, or the PostgreSQL database and the webhook secrets key PostgreSQL requires.
 */
function serverDatabaseEnv(database) {
  return database.url.startsWith('sqlite:')
    ? { DATABASE_URL: database.url }
    : { DATABASE_URL: database.url, WEBHOOK_SECRETS_KEY: database.webhookSecretsKey };
}

/** PostgreSQL is not migrated by the server at start: the CLI does it, as in production. */
function migrate(database) {
  const result = spawnSync(process.execPath, [CLI_MAIN, 'migrate', '--json'], {
    cwd: REPO_ROOT,
    env: childEnv({ ...serverDatabaseEnv(database), NODE_ENV: 'production', LOG_LEVEL: 'warn' }),
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    throw new BenchError(
      `migrating failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`,
    );
  }
}

function seed(database) {
  const args = [
    CLI_MAIN,
    'seed',
    '--students',
    String(STUDENTS),
    '--rate-limit',
    String(RATE_LIMIT_PER_MINUTE),
    '--json',
  ];
  const result = spawnSync(process.execPath, args, {
    cwd: REPO_ROOT,
    env: childEnv({
      ...serverDatabaseEnv(database),
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
    }),
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  let output;
  try {
    output = JSON.parse(result.stdout.slice(result.stdout.indexOf('{')));
  } catch {
    output = undefined;
  }
  if (result.status !== 0 || !output || output.error) {
    throw new BenchError(
      `seeding failed (exit ${result.status}): ${output?.error?.message ?? ''}\n${result.stdout}\n${result.stderr}`,
    );
  }
  if (
    output.students_created !== STUDENTS ||
    typeof output.token !== 'string' ||
    !output.organization_id
  ) {
    throw new BenchError(`unexpected seed output: ${result.stdout}`);
  }
  return { token: output.token, organizationId: output.organization_id };
}

/**
 * A confidential OAuth client of the organization (admin CLI), for the case that lists with an
 * OAuth access token instead of the personal one.
 */
function registerOAuthClient(database, organizationId) {
  const result = spawnSync(
    process.execPath,
    [
      CLI_MAIN,
      'oauth-clients:create',
      '--org',
      organizationId,
      '--name',
      'Bench',
      '--type',
      'confidential',
      '--scopes',
      'students:read',
      '--grants',
      'client_credentials',
      '--json',
    ],
    {
      cwd: REPO_ROOT,
      env: childEnv({ ...serverDatabaseEnv(database), NODE_ENV: 'production' }),
      encoding: 'utf8',
    },
  );
  const output = result.status === 0 ? JSON.parse(result.stdout) : undefined;
  if (!output?.client_secret)
    throw new BenchError(`registering the OAuth client failed: ${result.stderr}`);
  return output;
}

/** An access token from the server's token endpoint (client credentials grant). */
async function oauthAccessToken(base, client) {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${client.id}:${client.client_secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'students:read' }),
  });
  const body = await res.json();
  if (!res.ok || typeof body.access_token !== 'string') {
    throw new BenchError(`the token endpoint refused: ${JSON.stringify(body)}`);
  }
  return body.access_token;
}

/**
 * On PostgreSQL, the planner's statistics for what was just seeded. A deployment's tables have
 * them (autovacuum analyzes a table once enough of it changed, within a minute by default); a
 * table seeded a moment ago has none until then, and the list's statements are planned blind:
 * the first case measured (the server's page 1) ran at a third of the throughput of the OAuth
 * case after it, on the same server, until autovacuum came round.
 */
async function analyze(database) {
  if (database.url.startsWith('sqlite:')) return;
  const { Client } = require('pg');
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('VACUUM (ANALYZE)');
  } finally {
    await client.end();
  }
}

/** Polls `url` until it answers 2xx; on failure, prints the child's last output. */
async function waitReady(processes, record, url, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no answer';
  while (Date.now() < deadline) {
    if (record.exited) throw new BenchError(`${record.name} exited before it was ready`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.ok) return;
      lastError = `HTTP ${res.status}`;
    } catch (error) {
      lastError = error.message;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  processes.printOutput(record);
  throw new BenchError(
    `${record.name} was not ready at ${url} within ${timeoutMs / 1000} s (${lastError})`,
  );
}

/** The database to seed: a file in tmpDir, or a fresh PostgreSQL database, migrated. */
async function prepareDatabase({ config, processes }, tmpDir) {
  const database =
    config.database === 'sqlite'
      ? { url: `sqlite:${path.join(tmpDir, 'bench.sqlite')}` }
      : {
          url: await processes.createDatabase(config.databaseName),
          webhookSecretsKey: crypto.randomBytes(32).toString('base64'),
        };
  if (config.database === 'postgres') migrate(database);
  return database;
}

/** Where the students go, for the log. */
function databaseLabel(config, database) {
  return config.database === 'sqlite'
    ? database.url.slice('sqlite:'.length)
    : `PostgreSQL database ${config.databaseName}`;
}

/**
 * The server and the bare baseline, started and ready, and the targets measured: the server with
 * a personal token and with an OAuth token, and the baseline.
 */
async function startTargets(context, database, organizationId, token) {
  const { config, processes, log } = context;
  const [serverPort, barePort] = [await freePort(), await freePort()];
  // Both with the heap flags `pnpm start` gives the server, so neither is measured on another GC.
  const profilerArgs = [
    ...serverNodeFlags(),
    ...(config.cpuProfile ? ['--require', PROFILER_PRELOAD] : []),
  ];
  if (config.cpuProfile) {
    fs.rmSync(config.profilesDir, { recursive: true, force: true });
    fs.mkdirSync(config.profilesDir, { recursive: true });
  }

  const server = processes.startChild(
    'server',
    [...profilerArgs, SERVER_MAIN],
    childEnv({
      ...serverDatabaseEnv(database),
      HOST: '127.0.0.1',
      PORT: String(serverPort),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    }),
    { ipc: config.cpuProfile },
  );
  const bare = processes.startChild(
    'bare',
    [...profilerArgs, BARE_MAIN],
    childEnv({
      ...(config.database === 'sqlite'
        ? { BARE_DATABASE: database.url.slice('sqlite:'.length) }
        : { BARE_DATABASE_URL: database.url }),
      BARE_ORGANIZATION_ID: organizationId,
      HOST: '127.0.0.1',
      PORT: String(barePort),
    }),
    { ipc: true },
  );

  const targets = {
    server: {
      name: 'server',
      record: server,
      base: `http://127.0.0.1:${serverPort}`,
      headers: { authorization: `Bearer ${token}` },
    },
    bare: { name: 'bare', record: bare, base: `http://127.0.0.1:${barePort}`, headers: {} },
  };
  await Promise.all([
    waitReady(processes, server, `${targets.server.base}/health/ready`),
    waitReady(processes, bare, `${targets.bare.base}/health/ready`),
  ]);
  log(
    `server (node apps/server/dist/main.js) on ${targets.server.base}, bare baseline on ${targets.bare.base}`,
  );
  // The same server and page, authenticated with an OAuth access token (client credentials).
  targets.oauth = {
    name: 'server (OAuth token)',
    record: server,
    base: targets.server.base,
    headers: {
      authorization: `Bearer ${await oauthAccessToken(targets.server.base, registerOAuthClient(database, organizationId))}`,
    },
  };
  if (config.peer) targets.peer = await startPeer(context, database, token);
  return { server, bare, targets };
}

/** The NestJS + TypeORM peer on the same database, with the server's token. */
async function startPeer({ config, processes, log }, database, token) {
  const port = await freePort();
  const record = processes.startChild(
    'peer',
    [
      ...serverNodeFlags(),
      ...(config.cpuProfile ? ['--require', PROFILER_PRELOAD] : []),
      PEER_MAIN,
    ],
    childEnv({
      ...(config.database === 'sqlite'
        ? { PEER_DATABASE: database.url.slice('sqlite:'.length) }
        : { PEER_DATABASE_URL: database.url }),
      HOST: '127.0.0.1',
      PORT: String(port),
    }),
    { ipc: config.cpuProfile },
  );
  const base = `http://127.0.0.1:${port}`;
  await waitReady(processes, record, `${base}/health/ready`);
  log(`NestJS + TypeORM peer (bench/nest-peer-server.js) on ${base}`);
  return {
    name: 'NestJS + TypeORM peer',
    record,
    base,
    headers: { authorization: `Bearer ${token}` },
  };
}

module.exports = {
  analyze,
  prepareDatabase,
  databaseLabel,
  seed,
  startTargets,
};

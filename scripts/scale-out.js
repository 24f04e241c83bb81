#!/usr/bin/env node
'use strict';
/**
 * The scale-out deployment on one machine: throwaway PostgreSQL and Redis from the Debian
 * packages, and N server instances on loopback sharing them. Used by the scale-out tests, by
 * .ci/run and by the benchmark (as a library), and by hand (as a command):
 *
 *   node scripts/scale-out.js up --instances 2    start everything, print URLs and a token (JSON)
 *   node scripts/scale-out.js down                stop everything
 *
 * Build the server first (`pnpm build`). As a library:
 *   const { startInstances } = require('./scripts/scale-out');
 *   const cluster = await startInstances({ count: 2, databaseUrl, redisUrl, env });
 *   cluster.urls; await cluster.kill(0, 'SIGKILL'); await cluster.stop();
 */
// As a command, loopback only for it and the instances it starts (tooling/hermetic); as a
// library, the caller's run (a Jest run, a benchmark) has already made that so.
if (require.main === module) require('../tooling/hermetic').enforceForRun();
const { execFileSync, spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const MAIN = path.join(ROOT, 'apps', 'server', 'dist', 'main.js');
const CLI = path.join(ROOT, 'apps', 'server', 'dist', 'cli', 'main.js');
const STATE = path.join(
  process.env.PLATFORM_SCALE_OUT_DIR || '/tmp/platform-scale-out',
  'state.json',
);

/** The server's own settings are never inherited from this process's environment. */
function serverEnv(extra) {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/^(DATABASE_|REDIS_|WEBHOOK_|RATE_LIMIT_|PORT$|HOST$|LOG_LEVEL$|DEV_)/.test(key))
      delete env[key];
  }
  return { ...env, ...extra };
}

/** Runs the admin CLI against the shared database and returns its --json output. */
function cli(env, ...args) {
  const out = execFileSync(process.execPath, [CLI, ...args, '--json'], {
    env: serverEnv(env),
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

/** A free loopback port (the OAuth issuer names a port, so it is chosen before boot). */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Starts one instance on `port` and resolves with its URL once it listens. */
function startInstance(env, port, { detached = false } = {}) {
  const child = spawn(process.execPath, [MAIN], {
    env: serverEnv({ ...env, PORT: String(port), HOST: '127.0.0.1' }),
    stdio: detached ? ['ignore', 'pipe', 'ignore'] : ['ignore', 'pipe', 'pipe'],
    detached,
  });
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let output = '';
  const url = new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+?) /.exec(output);
      if (match) {
        child.stdout.off('data', onData);
        child.stdout.resume();
        resolve(match[1].replace('localhost', '127.0.0.1'));
      }
    };
    child.stdout.on('data', onData);
    child.stderr?.on('data', (chunk) => (output += chunk.toString()));
    exited.then(() => reject(new Error(`a server instance exited before listening:\n${output}`)));
  });
  return { child, url, exited };
}

/**
 * N instances on one PostgreSQL database and one Redis (migrated by the caller, or pass
 * `migrate: true`). `env` adds server settings (e.g. a short WEBHOOK_TIMEOUT for tests).
 */
async function startInstances({ count, databaseUrl, redisUrl, env = {}, migrate = false }) {
  const ports = [];
  for (let i = 0; i < count; i += 1) ports.push(await freePort());
  const shared = {
    // One issuer for every instance (they share OAuth state): the first instance stands in for
    // the load balancer's address.
    PUBLIC_URL: `http://127.0.0.1:${ports[0]}`,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: `platform-${crypto.randomBytes(4).toString('hex')}`,
    WEBHOOK_SECRETS_KEY: crypto.randomBytes(32).toString('base64'),
    ...env,
  };
  if (migrate) cli(shared, 'migrate');
  const instances = [];
  for (let i = 0; i < count; i += 1) instances.push(startInstance(shared, ports[i]));
  const urls = await Promise.all(instances.map((instance) => instance.url));
  return {
    urls,
    env: shared,
    cli: (...args) => cli(shared, ...args),
    /** Sends `signal` to instance `i` and waits for it to exit. */
    async kill(i, signal = 'SIGTERM') {
      instances[i].child.kill(signal);
      return instances[i].exited;
    },
    async stop() {
      await Promise.all(
        instances.map(async (instance) => {
          if (instance.child.exitCode === null && instance.child.signalCode === null) {
            instance.child.kill('SIGTERM');
            await instance.exited;
          }
        }),
      );
    },
  };
}

function sh(script, ...args) {
  return execFileSync(path.join(__dirname, script), args, { encoding: 'utf8' }).trim();
}

async function up(count) {
  // The throwaway cluster's own `postgres` database: the cluster exists for this deployment only.
  const databaseUrl = sh('throwaway-postgres.sh', 'start');
  const redisUrl = sh('throwaway-redis.sh', 'start');
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    WEBHOOK_SECRETS_KEY: crypto.randomBytes(32).toString('base64'),
  };
  const ports = [];
  for (let i = 0; i < count; i += 1) ports.push(await freePort());
  env.PUBLIC_URL = `http://127.0.0.1:${ports[0]}`;
  cli(env, 'migrate');
  const seeded = cli(env, 'seed');
  const pids = [];
  const urls = [];
  for (let i = 0; i < count; i += 1) {
    const instance = startInstance(env, ports[i], { detached: true });
    urls.push(await instance.url);
    instance.child.unref();
    instance.child.stdout.destroy();
    pids.push(instance.child.pid);
  }
  fs.mkdirSync(path.dirname(STATE), { recursive: true });
  const state = {
    database_url: databaseUrl,
    redis_url: redisUrl,
    instances: urls,
    pids,
    token: seeded.token,
  };
  fs.writeFileSync(STATE, JSON.stringify(state, null, 2));
  process.stdout.write(`${JSON.stringify(state, null, 2)}\n`);
}

function down() {
  if (fs.existsSync(STATE)) {
    const { pids } = JSON.parse(fs.readFileSync(STATE, 'utf8'));
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
    fs.rmSync(STATE);
  }
  sh('throwaway-redis.sh', 'stop');
  sh('throwaway-postgres.sh', 'stop');
}

module.exports = { startInstances };

if (require.main === module) {
  const [command, flag, value] = process.argv.slice(2);
  const count = flag === '--instances' ? Number(value) : 2;
  if (command === 'up' && Number.isInteger(count) && count > 0) {
    up(count).catch((error) => {
      console.error(error.message);
      process.exit(1);
    });
  } else if (command === 'down') {
    down();
  } else {
    console.error('usage: node scripts/scale-out.js up [--instances N] | down');
    process.exit(2);
  }
}

'use strict';
/**
 * The real server as a child process for the benchmarks that measure it from outside (exports,
 * imports): its environment, its CLI, a database of its own (a SQLite file, or a PostgreSQL
 * database created and dropped), the process itself and its resident set.
 */
const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const SERVER_MAIN = path.join(REPO_ROOT, 'apps', 'server', 'dist', 'main.js');
const CLI_MAIN = path.join(REPO_ROOT, 'apps', 'server', 'dist', 'cli', 'main.js');
/** apps/server's production `start` flags. */
const SERVER_FLAGS = ['--max-semi-space-size=16', '--max-old-space-size=1024'];

function childEnv(extra) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(DATABASE_|REDIS_|RATE_LIMIT_|WEBHOOK|LOG_|PORT|HOST)/.test(key)) env[key] = value;
  }
  return { ...env, NODE_ENV: 'production', LOG_LEVEL: 'warn', ...extra };
}

function runCli(dbEnv, args) {
  const result = spawnSync(process.execPath, [CLI_MAIN, ...args, '--json'], {
    cwd: REPO_ROOT,
    env: childEnv(dbEnv),
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.status !== 0)
    throw new Error(`cli ${args[0]} failed: ${result.stdout}${result.stderr}`);
  return JSON.parse(result.stdout.slice(result.stdout.indexOf('{')));
}

async function database(tmp, dialect, prefix) {
  if (dialect === 'sqlite') {
    const file = path.join(tmp, 'bench.db');
    return { env: { DATABASE_URL: `sqlite:${file}` }, file, drop: async () => undefined };
  }
  const admin = process.env.BENCH_POSTGRES_URL || process.env.TEST_DATABASE_URL;
  if (!admin) throw new Error('BENCH_DATABASE=postgres needs BENCH_POSTGRES_URL');
  const { Client } = require('pg');
  const name = `${prefix}_${process.pid}`;
  const query = async (text) => {
    const client = new Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await query(`CREATE DATABASE "${name}"`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const env = {
    DATABASE_URL: url.toString(),
    WEBHOOK_SECRETS_KEY: crypto.randomBytes(32).toString('base64'),
  };
  runCli(env, ['migrate']);
  return {
    env,
    url: url.toString(),
    drop: () => query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

function rssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
}

/** The server on `port`, without the webhook dispatcher (nothing here delivers). */
function startServer(db, port) {
  return spawn(process.execPath, [...SERVER_FLAGS, SERVER_MAIN], {
    cwd: REPO_ROOT,
    env: childEnv({
      ...db.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      WEBHOOK_DISPATCHER: 'false',
    }),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

module.exports = { childEnv, database, REPO_ROOT, rssMb, runCli, startServer };

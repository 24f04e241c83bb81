'use strict';
/**
 * The child processes of a benchmark run and what it leaves behind: each child's last output (for
 * when something goes wrong), a temporary directory, and the PostgreSQL database the run created.
 * All of it is stopped or removed by `cleanup()`, on SIGINT, SIGTERM and SIGHUP, and, as a last
 * resort, at exit.
 */
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { BenchError } = require('./bench-error');

/**
 * The run's children, temporary directory and created database, with the handlers that remove
 * them however the run ends.
 *
 * @param {{ repoRoot: string, log: (message?: string) => void, adminUrl?: string }} options
 *   `adminUrl`: the PostgreSQL server where `createDatabase` creates a database, if it is used.
 */
function createProcesses(options) {
  const processes = new Processes(options);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      options.log(
        `\nReceived ${signal}: stopping the servers and removing the temporary database...`,
      );
      processes.cleanup().finally(() => process.exit(128 + os.constants.signals[signal]));
    });
  }
  // Last resort if the process ends without cleanup() having finished (e.g. process.exit elsewhere).
  process.on('exit', () => processes.cleanupSync());
  return processes;
}

class Processes {
  constructor({ repoRoot, log, adminUrl }) {
    this.repoRoot = repoRoot;
    this.log = log;
    this.adminUrl = adminUrl;
    this.children = new Set();
    this.tmpDir = undefined;
    /** The PostgreSQL database this run created, until it is dropped. */
    this.createdDatabase = undefined;
    this.cleaningUp = undefined;
  }

  /** A child process whose output is kept (last lines) for when something goes wrong. */
  startChild(name, args, env, { ipc = false } = {}) {
    const child = spawn(process.execPath, args, {
      cwd: this.repoRoot,
      env,
      stdio: ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
    });
    const record = {
      name,
      child,
      output: [],
      exited: false,
      exitCode: null,
      signal: null,
      stopping: false,
    };
    const keep = (stream) => (chunk) => {
      for (const line of chunk.toString().split('\n')) {
        if (!line) continue;
        record.output.push(`[${name} ${stream}] ${line}`);
        if (record.output.length > 60) record.output.shift();
      }
    };
    child.stdout.on('data', keep('stdout'));
    child.stderr.on('data', keep('stderr'));
    record.exitedPromise = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        record.exited = true;
        record.exitCode = code;
        record.signal = signal;
        if (!record.stopping && !this.cleaningUp) {
          this.log(`\n!! ${name} exited unexpectedly (code ${code}, signal ${signal})`);
          this.printOutput(record);
        }
        resolve();
      });
    });
    child.on('error', (error) => this.log(`!! could not start ${name}: ${error.message}`));
    this.children.add(record);
    return record;
  }

  printOutput(record) {
    if (!record.output.length) return;
    this.log(`--- last output of ${record.name} ---`);
    for (const line of record.output) this.log(line);
    this.log(`--- end of ${record.name} output ---`);
  }

  async stopChild(record, signal = 'SIGTERM') {
    if (record.exited) return;
    record.stopping = true;
    record.child.kill(signal);
    const timeout = new Promise((resolve) => setTimeout(resolve, 10_000).unref());
    await Promise.race([record.exitedPromise, timeout]);
    if (!record.exited) {
      record.child.kill('SIGKILL');
      await record.exitedPromise;
    }
  }

  /** A fresh temporary directory, removed at cleanup. */
  makeTmpDir() {
    this.tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-bench-'));
    return this.tmpDir;
  }

  removeTmpDir() {
    if (this.tmpDir) {
      fs.rmSync(this.tmpDir, { recursive: true, force: true });
      this.tmpDir = undefined;
    }
  }

  /** Runs one statement on the PostgreSQL server (as its admin URL's user), in a client of its own. */
  async adminQuery(text) {
    const { Client } = require('pg');
    const client = new Client({ connectionString: this.adminUrl });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  }

  /** Creates the database `name` on the admin URL's server, dropped at cleanup; its URL. */
  async createDatabase(name) {
    await this.adminQuery(`CREATE DATABASE "${name}"`);
    this.createdDatabase = name;
    const url = new URL(this.adminUrl);
    url.pathname = `/${name}`;
    return url.toString();
  }

  async dropDatabase() {
    if (!this.createdDatabase) return;
    const name = this.createdDatabase;
    this.createdDatabase = undefined;
    try {
      await this.adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    } catch (error) {
      this.log(`!! could not drop the benchmark database ${name}: ${error.message}`);
    }
  }

  async cleanup() {
    if (!this.cleaningUp) {
      this.cleaningUp = (async () => {
        await Promise.all([...this.children].map((record) => this.stopChild(record)));
        this.removeTmpDir();
        await this.dropDatabase();
      })();
    }
    return this.cleaningUp;
  }

  /** What cleanup() does, without an event loop: at exit. */
  cleanupSync() {
    for (const record of this.children) if (!record.exited) record.child.kill('SIGKILL');
    this.removeTmpDir();
    if (this.createdDatabase) {
      // No more event loop here: drop it from a short-lived child instead (run in bench/, where
      // `pg` resolves).
      spawnSync(
        process.execPath,
        [
          '-e',
          `const { Client } = require('pg'); const c = new Client({ connectionString: process.argv[1] });
         c.connect().then(() => c.query(process.argv[2])).finally(() => c.end());`,
          this.adminUrl,
          `DROP DATABASE IF EXISTS "${this.createdDatabase}" WITH (FORCE)`,
        ],
        { cwd: path.resolve(__dirname, '..'), stdio: 'ignore', timeout: 15_000 },
      );
    }
  }
}

/** Asks a child started with the profiler preload to start or stop profiling; waits for its answer. */
function profilerRequest(record, message, expect) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      record.child.off('message', onMessage);
      reject(new BenchError(`${record.name} did not answer ${message.type} within 30 s`));
    }, 30_000);
    const onMessage = (reply) => {
      if (reply?.type !== expect && reply?.type !== 'profile:error') return;
      clearTimeout(timer);
      record.child.off('message', onMessage);
      if (reply.type === 'profile:error')
        reject(new BenchError(`${record.name} profiler: ${reply.message}`));
      else resolve(reply);
    };
    record.child.on('message', onMessage);
    record.child.send(message);
  });
}

module.exports = { createProcesses, profilerRequest };

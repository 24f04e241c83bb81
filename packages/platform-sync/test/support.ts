/**
 * What the mirror's tests share: the target database (SQLite, or PostgreSQL under
 * `pnpm test:postgres`), and the built `platform-sync` command run as its own process, so a
 * test can SIGKILL it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type MirrorDatabase, openDatabase } from '../src/database';

export const DEPLOYMENT =
  process.env.PLATFORM_TEST_DEPLOYMENT === 'postgres' ? 'postgres' : 'sqlite';
export const POSTGRES_ADMIN_URL = process.env.TEST_DATABASE_URL;
if (DEPLOYMENT === 'postgres' && !POSTGRES_ADMIN_URL)
  throw new Error(
    'PLATFORM_TEST_DEPLOYMENT=postgres needs TEST_DATABASE_URL (scripts/throwaway-postgres.sh prints it)',
  );

const BIN = join(__dirname, '..', 'bin', 'platform-sync.js');

/** A fresh, empty database for a mirror: its `--database` URL and how to drop it. */
export async function freshMirrorDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (DEPLOYMENT === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'platform-sync-'));
    return { url: `sqlite:${join(dir, 'mirror.db')}`, drop: () => Promise.resolve() };
  }
  const name = `mirror_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export interface MirrorProcess {
  child: ChildProcess;
  /** stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  /** Resolves once stderr has a line matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

/** Runs the built `platform-sync` with these arguments. */
export function startMirror(
  args: readonly string[],
  env: Record<string, string> = {},
): MirrorProcess {
  if (!existsSync(join(__dirname, '..', 'dist', 'index.js')))
    throw new Error('Build the package first: pnpm --filter @platform/sync build');
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, PLATFORM_SYNC_POLL_MS: '50', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const waiters: { pattern: RegExp; resolve(): void }[] = [];
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const waiter of [...waiters]) {
      if (waiter.pattern.test(stderr)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  });
  child.stdout.resume();
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  return {
    child,
    output: () => stderr,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      if (pattern.test(stderr)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`platform-sync never printed ${pattern}; it printed:\n${stderr}`)),
          timeoutMs,
        );
        waiters.push({
          pattern,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
        void exited.then(() => {
          clearTimeout(timer);
          if (!pattern.test(stderr))
            reject(
              new Error(`platform-sync exited before printing ${pattern}; it printed:\n${stderr}`),
            );
        });
      });
    },
  };
}

/** Runs `platform-sync` to its end: exit code and stderr. */
export async function runMirrorToEnd(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | string; output: string }> {
  const mirror = startMirror(args, env);
  const code = await mirror.exited;
  return { code, output: mirror.output() };
}

/** Opens the mirror's database from the test, to look at what it holds. */
export function openMirror(url: string): Promise<MirrorDatabase> {
  return openDatabase(url);
}

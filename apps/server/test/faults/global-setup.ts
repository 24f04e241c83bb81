import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const SCRIPTS = path.join(__dirname, '..', '..', '..', '..', 'scripts');

/**
 * Once per run: the hermetic guard, the table file the scenarios append to, and a PostgreSQL and
 * a Redis of the suite's own (their own directories and ports), since scenarios stop and start
 * them under load.
 */
export default async function globalSetup(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS, untyped
  const hermetic: () => Promise<void> = require('@platform/hermetic/jest-global-setup');
  await hermetic();
  const dir = mkdtempSync(path.join(tmpdir(), 'platform-faults-'));
  // PostgreSQL runs as `postgres` when the suite runs as root: it must reach its directory.
  chmodSync(dir, 0o755);
  process.env.FAULTS_DIR = dir;
  process.env.FAULTS_TABLE = path.join(dir, 'table.jsonl');
  process.env.PLATFORM_PG_DIR = path.join(dir, 'pg');
  process.env.PLATFORM_PG_PORT = process.env.FAULTS_PG_PORT ?? '55491';
  process.env.PLATFORM_REDIS_DIR = path.join(dir, 'redis');
  process.env.PLATFORM_REDIS_PORT = process.env.FAULTS_REDIS_PORT ?? '56391';
  process.env.FAULTS_POSTGRES_URL = execFileSync(
    path.join(SCRIPTS, 'throwaway-postgres.sh'),
    ['start'],
    {
      encoding: 'utf8',
    },
  ).trim();
  process.env.FAULTS_REDIS_URL = execFileSync(path.join(SCRIPTS, 'throwaway-redis.sh'), ['start'], {
    encoding: 'utf8',
  }).trim();
}

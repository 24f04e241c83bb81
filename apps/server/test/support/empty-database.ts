import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';

/**
 * A database of its own for a test that migrates step by step: a SQLite file in a temporary
 * directory, or (with TEST_DATABASE_URL) a new PostgreSQL database on that server.
 */
export async function emptyDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) {
    const dir = mkdtempSync(path.join(tmpdir(), 'migration-'));
    return {
      url: `sqlite:${path.join(dir, 'db.sqlite')}`,
      drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
    };
  }
  const name = `platform_test_${randomBytes(6).toString('hex')}`;
  const run = async (sql: string) => {
    const c = new Client({ connectionString: admin });
    await c.connect();
    await c.query(sql);
    await c.end();
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

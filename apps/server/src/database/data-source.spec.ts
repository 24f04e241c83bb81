import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DataSource } from 'typeorm';
import { loadConfig, SQLITE_CACHE_DEFAULT_MIB } from '../config/env';
import { APP_SCHEMA } from '../schema';
import { dataSourceOptions } from './data-source';

describe(`${dataSourceOptions.name} on SQLite`, () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'data-source-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The page cache the server's connection was given, in KiB (SQLite reports it negated). */
  async function cacheKib(env: Record<string, string>): Promise<number> {
    const config = loadConfig({ DATABASE_URL: `sqlite:${dir}/db.sqlite`, ...env });
    const dataSource = new DataSource(dataSourceOptions(config.database, APP_SCHEMA));
    await dataSource.initialize();
    try {
      const rows = await dataSource.query<{ cache_size: number }[]>('PRAGMA cache_size');
      expect(rows).toHaveLength(1);
      return -rows[0]!.cache_size;
    } finally {
      await dataSource.destroy();
    }
  }

  it('gives the connection the page cache SQLITE_CACHE_MIB names, and the documented default', async () => {
    expect(await cacheKib({ SQLITE_CACHE_MIB: '3' })).toBe(3 * 1024);
    expect(await cacheKib({})).toBe(SQLITE_CACHE_DEFAULT_MIB * 1024);
  });
});

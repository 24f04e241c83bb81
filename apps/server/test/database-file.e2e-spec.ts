/**
 * The SQLite database holds every record and token hash: a server that creates it makes it, and
 * the -wal and -shm files beside it, readable by its own user only (mode 0600), like the webhook
 * key file. This is about the SQLite file, so it uses SQLite in every run (PostgreSQL ones too).
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createApp } from '../src/app.factory';
import { loadConfig } from '../src/config/env';

describe('the SQLite database file', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'platform-file-'));
  let app: NestExpressApplication | undefined;
  let umask: number;

  beforeAll(() => {
    // A common default umask, under which SQLite would make the file 0644.
    umask = process.umask(0o022);
  });

  afterAll(async () => {
    await app?.close();
    process.umask(umask);
    rmSync(dir, { recursive: true, force: true });
  });

  it('is created with mode 0600 by a server starting on a fresh path, and so are its -wal and -shm', async () => {
    const file = path.join(dir, 'data', 'platform.sqlite');
    app = await createApp(
      loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: `sqlite:${file}` }),
    );
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);

    const modes = Object.fromEntries(
      readdirSync(path.dirname(file)).map((name) => [
        name,
        (statSync(path.join(path.dirname(file), name)).mode & 0o777).toString(8),
      ]),
    );
    expect(modes).toEqual({
      'platform.sqlite': '600',
      'platform.sqlite-wal': '600',
      'platform.sqlite-shm': '600',
      'webhook-secrets.key': '600',
    });
  });
});

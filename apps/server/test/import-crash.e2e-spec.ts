/**
 * An import whose server is killed (SIGKILL) mid-way, with a real server process
 * (`node dist/main.js`): the next process resumes it where the last committed chunk left it, and
 * every row is applied exactly once: no record lost, none created twice, one event per record.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Import } from '@platform/contract';
import { prepareDatabase } from '../src/testing';
import { runPlatform } from './support/cli';
import { ndjsonOf } from './support/imports';
import { waitFor } from './support/receiver';
import { databaseOptions } from './support/server';

const DIST = path.join(__dirname, '..', 'dist');
const ROWS = 40_000;

interface Running {
  child: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

describe('an import across a server crash', () => {
  let db: Awaited<ReturnType<typeof prepareDatabase>>;
  let token: string;
  const env: Record<string, string> = {};
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    db = await prepareDatabase(databaseOptions());
    Object.assign(env, {
      DATABASE_URL: db.databaseUrl,
      // Required with PostgreSQL; unused here.
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
      IMPORT_LEASE: '1s',
      LOG_LEVEL: 'silent',
      // The test polls the import's progress as fast as it can; on PostgreSQL the 40,000 rows
      // outlast the default 600 requests a minute, and a 429 is not what this test is about.
      RATE_LIMIT_DEFAULT: '1000000',
    });
    const cli = async (...args: string[]) =>
      JSON.parse((await runPlatform({ env }, ...args, '--json')).stdout);
    const org = await cli('orgs:create', '--name', 'Import Crash School');
    token = (await cli('tokens:create', '--org', org.id, '--name', 'sis', '--scopes', 'all')).token;
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await db.drop();
  });

  async function startProcess(): Promise<Running> {
    const child = spawn(process.execPath, [path.join(DIST, 'main.js')], {
      env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (http:\/\/\S+?) /.exec(output);
        if (match) resolve(match[1]!.replace('localhost', '127.0.0.1'));
      });
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      void exited.then(() => reject(new Error(`the server exited before listening:\n${output}`)));
    });
    return { child, url, exited };
  }

  const get = async <T>(server: Running, route: string): Promise<T> => {
    const res = await fetch(`${server.url}${route}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  };
  const total = async (server: Running, route: string) =>
    (await get<{ meta: { total: number; total_exact: boolean } }>(server, route)).meta;

  it('resumes after SIGKILL at the first row not committed, applying each row once', async () => {
    const first = await startProcess();
    const rows = Array.from({ length: ROWS }, (_, i) => ({
      external_id: `SIS-${i}`,
      student_number: `N-${i}`,
      first_name: 'Crash',
      last_name: `Row ${i}`,
    }));
    const form = new FormData();
    form.append('file', new Blob([ndjsonOf(rows)], { type: 'application/x-ndjson' }), 'sis.ndjson');
    const res = await fetch(`${first.url}/v1/imports?collection=students`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: form,
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as Import;

    // Part applied, part not: kill it there.
    let atKill: Import | undefined;
    await waitFor(
      async () => {
        atKill = await get<Import>(first, `/v1/imports/${id}`);
        return atKill.rows_processed >= 1000;
      },
      { what: 'the first chunk applied', intervalMs: 5 },
    );
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(atKill!.rows_processed).toBeLessThan(ROWS);

    const second = await startProcess();
    // What the dead process committed is there, whole chunks only, with its progress.
    const resumedFrom = await get<Import>(second, `/v1/imports/${id}`);
    expect(resumedFrom.rows_processed % 1000).toBe(0);
    let done: Import | undefined;
    await waitFor(
      async () => {
        done = await get<Import>(second, `/v1/imports/${id}`);
        return done.status === 'succeeded' || done.status === 'failed';
      },
      { timeoutMs: 60_000, what: 'the import to finish on the second process' },
    );
    expect(done).toMatchObject({ status: 'succeeded', rows: ROWS, rows_processed: ROWS });
    // Every row created exactly once: a chunk applied twice would count its rows unchanged.
    expect(done!.counts).toEqual({
      created: ROWS,
      updated: 0,
      unchanged: 0,
      failed: 0,
      withdrawn: 0,
      skipped: 0,
    });
    expect(await total(second, '/v1/students?per_page=1')).toMatchObject({ total: ROWS });
    // One student.created per record, read off the change feed whole.
    const created = new Map<string, number>();
    for (let after = '0'; ;) {
      const page = await get<{
        data: { type: string; data: { external_id: string } }[];
        next_cursor: string;
        has_more: boolean;
      }>(second, `/v1/changes?after=${after}&limit=1000`);
      for (const event of page.data) {
        if (event.type !== 'student.created') continue;
        const key = event.data.external_id;
        created.set(key, (created.get(key) ?? 0) + 1);
      }
      if (!page.has_more) break;
      after = page.next_cursor;
    }
    expect(created.size).toBe(ROWS);
    expect([...created.values()].every((n) => n === 1)).toBe(true);
  });
});

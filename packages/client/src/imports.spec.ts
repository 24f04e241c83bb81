/**
 * `imports.create` against the real server: the file goes as the multipart part `file` (as a
 * Blob, bytes or text), the query carries the options, `wait` answers the finished import, and a
 * retried upload is the same import (its Idempotency-Key is kept across attempts).
 */
import { openAsBlob } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from '@platform/server/testing';
import { type Client, createClient } from './index';

let server: TestServer;
let sdk: Client;
let token: string;

beforeAll(async () => {
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL,
    redisUrl: process.env.TEST_REDIS_URL,
  });
  const organization = await server.createOrganization();
  ({ token } = await server.createToken(organization.id, ['all']));
  sdk = createClient({ baseUrl: server.url, token });
});

afterAll(async () => {
  await server?.close();
});

it('uploads a CSV file from disk, waits for it and reads its error report', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'sdk-import-'));
  try {
    const file = path.join(dir, 'students.csv');
    const csv = [
      'external_id,student_number,first_name,last_name,email',
      'TS-1,TS-N-1,Ada,Lovelace,',
      'TS-2,TS-N-2,Alan,Turing,not-an-email',
    ].join('\n');
    await writeFile(file, csv);
    const created = await sdk.imports.create({
      query: { collection: 'students' },
      body: { file: await openAsBlob(file), filename: 'students.csv' },
    });
    expect(created).toMatchObject({ object: 'import', format: 'csv', rows: 2 });
    const done = await sdk.imports.wait(created.id, { intervalMs: 20 });
    expect(done).toMatchObject({ status: 'succeeded', counts: { created: 1, failed: 1 } });
    expect((await sdk.students.retrieve('ext:TS-1')).first_name).toBe('Ada');
    const report = await sdk.imports.errors(done.id);
    expect(report.split('\n')[1]).toMatch(/^2,TS-2,email,/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it('takes text or bytes, typed by the query format, with the options as query parameters', async () => {
  const ndjson =
    '{"external_id":"TS-3","student_number":"TS-N-3","first_name":"G","last_name":"H"}\n';
  const dry = await sdk.imports.create({
    query: { collection: 'students', format: 'ndjson', dry_run: true },
    body: { file: ndjson },
  });
  expect(await sdk.imports.wait(dry.id, { intervalMs: 20 })).toMatchObject({
    dry_run: true,
    counts: { created: 1 },
  });
  await expect(sdk.students.retrieve('ext:TS-3')).rejects.toThrow();
  const bytes = await sdk.imports.create({
    query: { collection: 'students', format: 'ndjson' },
    body: { file: new TextEncoder().encode(ndjson) },
  });
  expect(await sdk.imports.wait(bytes.id, { intervalMs: 20 })).toMatchObject({
    status: 'succeeded',
    counts: { created: 1 },
  });
  const listed = await sdk.imports.list({ collection: 'students' });
  expect(listed.data.map((i) => i.id)).toContain(bytes.id);
});

it('a repeat under the same Idempotency-Key is the same import; another file under it is a 409', async () => {
  const sdkWithKey = createClient({ baseUrl: server.url, token });
  const body = {
    file: '{"external_id":"TS-4","student_number":"TS-N-4","first_name":"I","last_name":"J"}\n',
  };
  const query = { collection: 'students' as const, format: 'ndjson' as const };
  const first = await sdkWithKey.imports.create(
    { query, body },
    { idempotencyKey: 'ts-import-key' },
  );
  const again = await sdkWithKey.imports.create(
    { query, body },
    { idempotencyKey: 'ts-import-key' },
  );
  expect(again.id).toBe(first.id);
  const other = sdkWithKey.imports.create(
    { query, body: { file: '{"external_id":"TS-5"}\n' } },
    { idempotencyKey: 'ts-import-key' },
  );
  await expect(other).rejects.toMatchObject({ status: 409 });
});

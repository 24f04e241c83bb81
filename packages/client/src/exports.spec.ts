/**
 * The export helpers against the real server: create, `wait` for the finished export, stream its
 * file, and check it against the collection checksum a client computes itself.
 */
import { createHash } from 'node:crypto';
import { startTestServer, type TestServer } from '@platform/server/testing';
import {
  type Client,
  collectionChecksum,
  createClient,
  PlatformError,
  PlatformNotFoundError,
} from './index';

let server: TestServer;
let sdk: Client;

beforeAll(async () => {
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL,
    redisUrl: process.env.TEST_REDIS_URL,
  });
  const organization = await server.createOrganization();
  const { token } = await server.createToken(organization.id, ['all']);
  sdk = createClient({ baseUrl: server.url, token });
  await server.insertStudents(organization.id, 300);
});

afterAll(async () => {
  await server?.close();
});

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let out = '';
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>)
    out += decoder.decode(chunk, { stream: true });
  return out + decoder.decode();
}

it('creates an export, waits for it, and streams a file whose checksum matches the server', async () => {
  const created = await sdk.exports.create({ body: { collection: 'students' } });
  expect(created.status).toMatch(/queued|running|succeeded/);
  const done = await sdk.exports.wait(created.id, { intervalMs: 50 });
  expect(done).toMatchObject({ id: created.id, status: 'succeeded', row_count: 300 });

  const lines = (await text(await sdk.exports.stream(done.id))).split('\n').filter(Boolean);
  const records = lines.map((line) => JSON.parse(line) as { id: string; updated_at: string });
  expect(records).toHaveLength(300);

  // The helper agrees with a plain SHA-256 over the documented lines, and with the server.
  const hash = createHash('sha256');
  for (const r of [...records].sort((a, b) => (a.id < b.id ? -1 : 1)))
    hash.update(`${r.id}\t${r.updated_at}\n`);
  const mine = await collectionChecksum(records.reverse());
  expect(mine).toBe(hash.digest('hex'));
  const sums = await sdk.checksums.retrieve({ collections: 'students' });
  expect(sums.data).toEqual([{ collection: 'students', count: 300, checksum: mine }]);
});

it('makes a download link that fetches the same file without a token', async () => {
  const created = await sdk.exports.create({ body: { collection: 'students', format: 'csv' } });
  const done = await sdk.exports.wait(created.id, { intervalMs: 50 });
  const link = await sdk.exports.createDownloadLink(done.id);
  expect(link).toMatchObject({ object: 'export_download_link', export_id: done.id });
  expect(Date.parse(link.expires_at)).toBeGreaterThan(Date.now());
  const res = await fetch(link.url);
  expect(res.status).toBe(200);
  expect(await res.text()).toBe(await text(await sdk.exports.stream(done.id)));
});

it('streams CSV, and says what is wrong with an export that has no file', async () => {
  const created = await sdk.exports.create({ body: { collection: 'students', format: 'csv' } });
  const done = await sdk.exports.wait(created.id, { intervalMs: 50 });
  const csv = await text(await sdk.exports.stream(done.id));
  expect(csv.split('\r\n')[0]).toMatch(/^id,object,external_id,student_number,/);
  await expect(sdk.exports.stream('exp_01JA0000000000000000000000')).rejects.toBeInstanceOf(
    PlatformNotFoundError,
  );
  await expect(
    sdk.exports.wait('exp_01JA0000000000000000000000', { intervalMs: 10 }),
  ).rejects.toBeInstanceOf(PlatformError);
});

it('starts a batch whose exports share one snapshot cursor', async () => {
  const batch = await sdk.exports.createBatch({ body: { collections: ['courses', 'students'] } });
  expect(batch.data.map((e) => e.collection)).toEqual(['courses', 'students']);
  const [courses, students] = await Promise.all(
    batch.data.map((e) => sdk.exports.wait(e.id, { intervalMs: 50 })),
  );
  expect(students).toMatchObject({ status: 'succeeded', row_count: 300 });
  expect(courses!.status).toBe('succeeded');
  expect(courses!.cursor).not.toBeNull();
  expect(students!.cursor).toBe(courses!.cursor);
});

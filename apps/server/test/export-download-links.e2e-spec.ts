/**
 * Export download links (`POST /v1/exports/{id}/download_links`): a URL that streams the file
 * without a token for five minutes, and that dies with the credential or member that made it, and
 * with the export. On SQLite and PostgreSQL.
 */
import { createHash } from 'node:crypto';
import {
  EXPORT_DOWNLOAD_LINK_TTL_SECONDS,
  ExportDownloadLinkSchema,
  type Export,
  type ExportDownloadLink,
} from '@platform/contract';
import { ManualClock } from '../src/testing';
import { expectStatus, typedClient } from './support/api';
import { waitFor } from './support/receiver';
import { problemOf, rawCall, rawClient, startServer, type TestServer } from './support/server';

const clock = new ManualClock();
let server: TestServer;
let orgId: string;
let operator: string;
const lines: string[] = [];
let people = 0;

beforeAll(async () => {
  server = await startServer(
    { EXPORT_RETENTION: '1h', RATE_LIMIT_ANONYMOUS: '40', LOG_LEVEL: 'trace' },
    { clock, logDestination: { write: (line: string) => void lines.push(line) } },
  );
  orgId = (await server.createOrganization()).id;
  ({ token: operator } = await server.createToken(orgId, ['all']));
  // A standing admin, so removing another member is never the last admin's.
  await server.createUser(orgId, 'head@links.example', 'correct horse battery staple', {
    role: 'admin',
  });
  await server.insertStudents(orgId, 120);
});
afterAll(() => server.close());

async function exported(token: string, collection = 'students'): Promise<Export> {
  const raw = rawClient(server, token);
  const created = await raw.post<Export>('/v1/exports', { collection });
  expect(created.status).toBe(202);
  return waitFor(
    async () => {
      const res = await raw.get<Export>(`/v1/exports/${created.body.id}`);
      return res.body.status === 'succeeded' && res.body;
    },
    { what: 'the export to succeed' },
  );
}

async function link(token: string, id: string): Promise<ExportDownloadLink> {
  const res = await rawCall<ExportDownloadLink>(server, `/v1/exports/${id}/download_links`, {
    token,
    method: 'POST',
  });
  expect(res.status).toBe(201);
  return res.body;
}

/** A plain GET of the link: no Authorization header. */
async function fetchLink(url: string) {
  const res = await fetch(url);
  return { status: res.status, headers: res.headers, body: await res.text() };
}

async function member(role: 'admin' | 'developer' | 'viewer' = 'developer') {
  const created = await server.createUser(
    orgId,
    `staff${++people}@links.example`,
    'correct horse battery staple',
    {
      role,
    },
  );
  const { token, id } = await server.createToken(orgId, ['all'], { userId: created.id });
  return { userId: created.id, token, tokenId: id };
}

async function expectGone(url: string) {
  const res = await fetch(url);
  expect(res.status).toBe(404);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.headers.get('cache-control')).toBe('private, no-store');
  const problem = (await res.json()) as { code: string; detail: string };
  expect(problem.code).toBe('not_found');
  return problem;
}

it('streams the same bytes and headers as the file route, with no token, as often as asked', async () => {
  const done = await exported(operator);
  const created = await link(operator, done.id);
  expect(ExportDownloadLinkSchema.safeParse(created).success).toBe(true);
  expect(created).toMatchObject({ object: 'export_download_link', export_id: done.id });
  expect(created.url.startsWith(`${server.url}/v1/export_downloads/expdl_`)).toBe(true);
  expect(Date.parse(created.expires_at) - clock.nowMs()).toBeGreaterThan(
    (EXPORT_DOWNLOAD_LINK_TTL_SECONDS - 5) * 1000,
  );
  expect(Date.parse(created.expires_at) - clock.nowMs()).toBeLessThanOrEqual(
    EXPORT_DOWNLOAD_LINK_TTL_SECONDS * 1000,
  );

  const file = await fetch(`${server.url}/v1/exports/${done.id}/file`, {
    headers: { Authorization: `Bearer ${operator}` },
  });
  const fileBody = await file.text();
  for (let i = 0; i < 2; i += 1) {
    const got = await fetchLink(created.url);
    expect(got.status).toBe(200);
    expect(got.body).toBe(fileBody);
    expect(got.body.split('\n').filter(Boolean)).toHaveLength(120);
    for (const header of ['content-type', 'content-disposition', 'content-length'])
      expect(got.headers.get(header)).toBe(file.headers.get(header));
    expect(got.headers.get('cache-control')).toBe('private, no-store');
    expect(got.headers.get('referrer-policy')).toBe('no-referrer');
  }

  // Only the token's SHA-256 is stored.
  const token = created.url.split('/').pop()!;
  const rows = await server.dataSource.query<Record<string, unknown>[]>(
    'SELECT * FROM export_download_links',
  );
  expect(rows.some((r) => r.token_hash === createHash('sha256').update(token).digest('hex'))).toBe(
    true,
  );
  expect(JSON.stringify(rows)).not.toContain(token);

  // Audited like the export's creation.
  const audit = expectStatus(
    await typedClient(server, operator).auditEvents.list({
      query: { action: 'export.download_link_created' },
    }),
    200,
  );
  expect(audit.body.data[0]).toMatchObject({ target: { type: 'export', id: done.id } });
});

it('keeps the token out of the request log and every log line', async () => {
  const done = await exported(operator, 'courses');
  const created = await link(operator, done.id);
  const token = created.url.split('/').pop()!;
  expect((await fetchLink(created.url)).status).toBe(200);
  await expectGone(`${created.url.slice(0, -4)}AAAA`);
  const rows = await waitFor(
    async () => {
      const found = await server.dataSource.query<Record<string, unknown>[]>(
        'SELECT * FROM request_logs',
      );
      return (
        found.some((r) => String(r.route).endsWith('/download_links') && r.status === 201) && found
      );
    },
    { what: 'the request log row of the link' },
  );
  expect(JSON.stringify(rows)).not.toContain(token);
  await waitFor(() => lines.some((l) => l.includes('/v1/export_downloads/:token')), {
    what: 'the log line of the download',
  });
  expect(lines.join('\n')).not.toContain(token);
});

it('needs the collection read scope, and another organization cannot make or use one', async () => {
  const done = await exported(operator);
  const { token: coursesOnly } = await server.createToken(orgId, ['exports:read', 'courses:read']);
  const hidden = await rawCall(server, `/v1/exports/${done.id}/download_links`, {
    token: coursesOnly,
    method: 'POST',
  });
  expect(hidden.status).toBe(404);
  const { token: noExports } = await server.createToken(orgId, ['students:read']);
  const refused = await rawCall(server, `/v1/exports/${done.id}/download_links`, {
    token: noExports,
    method: 'POST',
  });
  expect(problemOf(refused).code).toBe('insufficient_scope');

  const other = await server.createOrganization();
  const { token: outsider } = await server.createToken(other.id, ['all']);
  const res = await rawCall(server, `/v1/exports/${done.id}/download_links`, {
    token: outsider,
    method: 'POST',
  });
  expect(problemOf(res).code).toBe('not_found');
});

it('expires no later than the token that made it', async () => {
  const done = await exported(operator);
  const expiresAt = new Date(clock.nowMs() + 60_000);
  const { token } = await server.createToken(orgId, ['all'], { expiresAt });
  const created = await link(token, done.id);
  expect(Date.parse(created.expires_at)).toBe(expiresAt.getTime());
  expect((await fetchLink(created.url)).status).toBe(200);
  clock.advance(61_000);
  await expectGone(created.url);
});

it('stops working when the creating token is revoked', async () => {
  const done = await exported(operator);
  const { token, id } = await server.createToken(orgId, ['all']);
  const created = await link(token, done.id);
  expect((await fetchLink(created.url)).status).toBe(200);
  await server.revokeToken(id);
  await expectGone(created.url);
});

it('stops working when the member who made it is removed', async () => {
  const done = await exported(operator);
  const staff = await member();
  const created = await link(staff.token, done.id);
  expect((await fetchLink(created.url)).status).toBe(200);
  expectStatus(
    await typedClient(server, operator).members.delete({
      params: { id: staff.userId },
    }),
    200,
  );
  await expectGone(created.url);
});

it('answers 404 alike for an expired link, an expired export and an unknown one', async () => {
  const done = await exported(operator);
  const created = await link(operator, done.id);
  const unknown = await expectGone(`${server.url}/v1/export_downloads/expdl_${'x'.repeat(43)}`);
  const malformed = await expectGone(`${server.url}/v1/export_downloads/nope`);
  expect(malformed.detail).toBe(unknown.detail);

  clock.advance(EXPORT_DOWNLOAD_LINK_TTL_SECONDS * 1000 - 2_000);
  expect((await fetchLink(created.url)).status).toBe(200);
  clock.advance(3_000);
  expect((await expectGone(created.url)).detail).toBe(unknown.detail);

  // A fresh link of an export that then expires (retention: 1 hour) stops with it.
  const fresh = await link(operator, done.id);
  expect((await fetchLink(fresh.url)).status).toBe(200);
  clock.advance(60 * 60 * 1000);
  await expectGone(fresh.url);
  const late = await rawCall(server, `/v1/exports/${done.id}/download_links`, {
    token: operator,
    method: 'POST',
  });
  expect(problemOf(late).code).toBe('conflict');
});

it('charges unknown links to the client IP like any anonymous request', async () => {
  let limited = false;
  for (let i = 0; i < 60 && !limited; i += 1) {
    const res = await fetch(`${server.url}/v1/export_downloads/expdl_${'y'.repeat(43)}`);
    await res.arrayBuffer();
    limited = res.status === 429;
  }
  expect(limited).toBe(true);
});

/**
 * `client.changes.follow()` against the real server: it yields every change after the cursor in
 * feed order, resumes from `follower.cursor` without repeating or skipping, and a live follower
 * wakes on a change committed while it waits.
 */
import { startTestServer, type TestServer } from '@platform/server/testing';
import { createServer, type Server } from 'node:http';
import {
  createClient,
  PlatformConnectionError,
  PlatformCursorExpiredError,
  type PlatformClient,
  PlatformValidationError,
} from './index';

let server: TestServer;
let sdk: PlatformClient;

beforeAll(async () => {
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL,
    redisUrl: process.env.TEST_REDIS_URL,
  });
  const organization = await server.createOrganization();
  const { token } = await server.createToken(organization.id, ['all']);
  sdk = createClient({ baseUrl: server.url, token });
});

afterAll(async () => {
  await server?.close();
});

it('follows the feed page after page, and resumes from the saved cursor', async () => {
  for (let i = 0; i < 5; i += 1)
    await sdk.courses.create({ body: { code: `FOL-${i}`, title: `Follow ${i}` } });
  const first = await sdk.courses.create({ body: { code: 'FOL-X', title: 'Gone soon' } });
  await sdk.courses.delete({ params: { id: first.id } });

  const follower = sdk.changes.follow({ after: '0', limit: 2, untilCaughtUp: true });
  const seen: [number | null, string][] = [];
  const cursors: (string | null)[] = [];
  for await (const event of follower) {
    seen.push([event.position, event.type]);
    cursors.push(event.cursor);
    if (seen.length === 3) break;
  }
  // Where it stopped: the cursor of the last change yielded, whose number is its position.
  expect(follower.cursor).toBe(cursors[2]);
  expect(follower.cursor).toMatch(/^3\./);
  const rest = sdk.changes.follow({ after: follower.cursor, limit: 2, untilCaughtUp: true });
  for await (const event of rest) seen.push([event.position, event.type]);
  expect(seen).toEqual([
    [1, 'course.created'],
    [2, 'course.created'],
    [3, 'course.created'],
    [4, 'course.created'],
    [5, 'course.created'],
    [6, 'course.created'],
    [7, 'course.deleted'],
  ]);
  expect(rest.cursor).toMatch(/^7\./);
});

it('waits when caught up and yields a change as soon as it commits, until aborted', async () => {
  const controller = new AbortController();
  const head = sdk.changes.follow({ after: 'oldest', untilCaughtUp: true });
  for await (const _ of head) void _;
  const live = sdk.changes.follow({ after: head.cursor, signal: controller.signal, wait: '10s' });
  const next = live.next();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const course = await sdk.courses.create({ body: { code: 'FOL-LIVE', title: 'Live' } });
  const started = Date.now();
  const result = await next;
  expect(Date.now() - started).toBeLessThan(2000);
  expect(result.value).toMatchObject({ type: 'course.created', data: { id: course.id } });
  const pending = live.next();
  controller.abort();
  expect(await pending).toEqual({ value: undefined, done: true });
});

/** Follows until caught up; the ids and positions it yielded, and the retries it reported. */
async function drain(
  client: PlatformClient,
  options: Parameters<PlatformClient['changes']['follow']>[0],
) {
  const retries: [string, number, number][] = [];
  const follower = client.changes.follow({
    untilCaughtUp: true,
    ...options,
    onRetry: (error, attempt, delay) => retries.push([error.name, attempt, delay]),
  });
  const seen: [number | null, string][] = [];
  for await (const event of follower) seen.push([event.position, event.id]);
  return { seen, retries, cursor: follower.cursor };
}

it('takes the cursor as the feed returns it, and refuses to start without one', async () => {
  const second = (await sdk.changes.list({ after: '0', limit: 2 })).data[1]!;
  const fromCursor = await drain(sdk, { after: second.cursor! });
  expect(fromCursor.seen[0]![0]).toBe(3);
  const oldest = await drain(sdk, { after: 'oldest' });
  expect(oldest.seen[0]![0]).toBe(1);
  expect(await drain(sdk, { after: '0' })).toEqual(oldest);
  expect(oldest.cursor).toBe(fromCursor.cursor);
  const start = sdk.changes.follow as (options?: unknown) => unknown;
  expect(() => start()).toThrow(/follow needs `after`.*'oldest'/);
  expect(() => start({ untilCaughtUp: true })).toThrow(TypeError);
  // A position is not a cursor: the message says which to pass.
  for (const after of [2, 2n, '2', '01'])
    expect(() => start({ after })).toThrow(/after must be a cursor, not a position/);
  const tag = second.cursor!.split('.')[1]!;
  for (const after of [-1, 1.5, 'latest', '', null, true, `01.${tag}`, `2.${tag}x`])
    expect(() => start({ after })).toThrow(/after must be a cursor the API returned/);
});

it('follows across the server stopped for 10 s and started again: nothing lost or repeated', async () => {
  const before = await drain(sdk, { after: 'oldest' });
  const written: string[] = [];
  for (let i = 0; i < 3; i += 1)
    written.push((await sdk.courses.create({ body: { code: `RST-${i}`, title: 'Before' } })).id);
  const retries: string[] = [];
  const controller = new AbortController();
  const follower = sdk.changes.follow({
    after: before.cursor,
    wait: '2s',
    signal: controller.signal,
    onRetry: (error) => retries.push(error.name),
  });
  const seen: string[] = [];
  const following = (async () => {
    for await (const event of follower) {
      seen.push((event.data as { id: string }).id);
      if (seen.length === 6) controller.abort();
    }
  })();
  while (seen.length < 3) await new Promise((resolve) => setTimeout(resolve, 50));
  await server.stop();
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  expect(retries.length).toBeGreaterThan(0);
  await server.start();
  for (let i = 3; i < 6; i += 1)
    written.push((await sdk.courses.create({ body: { code: `RST-${i}`, title: 'After' } })).id);
  await following;
  expect(seen).toEqual(written);
  expect(new Set(retries)).toEqual(new Set(['PlatformConnectionError']));
}, 40_000);

it('ends at until without reading on, where a live follower would wait', async () => {
  const started = Date.now();
  const third = (await sdk.changes.list({ after: '0', limit: 3 })).next_cursor;
  const { seen, cursor } = await drain(sdk, {
    after: '0',
    until: third,
    untilCaughtUp: false,
    limit: 2,
  });
  expect(seen.map(([position]) => position)).toEqual([1, 2, 3]);
  expect(cursor).toBe(third);
  // Without until it would long-poll for 30 s once caught up.
  expect(Date.now() - started).toBeLessThan(20_000);
  const start = sdk.changes.follow as (options: unknown) => unknown;
  expect(() => start({ after: '0', until: 'x' })).toThrow(/^until must be a cursor/);
});

it('gives up after giveUpAfter seconds of failing, with the last error', async () => {
  const gone = createClient({ baseUrl: 'http://127.0.0.1:9', token: 'pat_unused' });
  const started = Date.now();
  const follower = gone.changes.follow({ after: '0', giveUpAfter: 1, maxRetryDelay: 0.2 });
  await expect(follower.next()).rejects.toBeInstanceOf(PlatformConnectionError);
  expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  expect(Date.now() - started).toBeLessThan(15_000);
});

describe('through a proxy that answers some reads itself', () => {
  let proxy: Server;
  let proxied: PlatformClient;
  /** Answers for the next reads of /v1/changes, before the real server's. */
  const canned: { status: number; headers?: Record<string, string> }[] = [];

  beforeAll(async () => {
    proxy = createServer((req, res) => {
      const answer = req.url?.startsWith('/v1/changes') ? canned.shift() : undefined;
      if (answer) {
        res.writeHead(answer.status, {
          'content-type': 'application/problem+json',
          ...answer.headers,
        });
        const code = answer.status === 429 ? 'rate_limited' : 'unavailable';
        res.end(
          JSON.stringify({
            type: 'about:blank',
            title: code,
            status: answer.status,
            detail: code,
            code,
          }),
        );
        return;
      }
      void fetch(`${server.url}${req.url}`, {
        headers: { authorization: req.headers.authorization ?? '' },
      }).then(async (upstream) => {
        res.writeHead(upstream.status, {
          'content-type': upstream.headers.get('content-type') ?? 'application/json',
        });
        res.end(Buffer.from(await upstream.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { token } = await server.createToken((await server.createOrganization()).id, ['all']);
    proxied = createClient({
      baseUrl: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`,
      token,
    });
    // The proxy forwards reads only; the write goes to the server itself.
    await createClient({ baseUrl: server.url, token }).courses.create({
      body: { code: 'PRX', title: 'Proxied' },
    });
  });
  afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

  it('retries 503 and 429, waiting what Retry-After asks, else backing off', async () => {
    canned.push({ status: 503, headers: { 'retry-after': '1' } }, { status: 429 }, { status: 502 });
    const started = Date.now();
    const { seen, retries } = await drain(proxied, { after: '0', maxRetryDelay: 4 });
    expect(seen.map(([position]) => position)).toEqual([1]);
    expect(retries.map(([name, attempt]) => [name, attempt])).toEqual([
      ['PlatformServerError', 1],
      ['PlatformRateLimitError', 2],
      ['PlatformServerError', 3],
    ]);
    expect(retries[0]![2]).toBe(1);
    // Backoff doubles from half a second, each wait in the upper half of its step.
    expect(retries[1]![2]).toBeGreaterThanOrEqual(0.5);
    expect(retries[1]![2]).toBeLessThanOrEqual(1);
    expect(retries[2]![2]).toBeGreaterThanOrEqual(1);
    expect(retries[2]![2]).toBeLessThanOrEqual(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2500);
  });

  it('gives up at giveUpAfter even when Retry-After asks for longer', async () => {
    canned.push(
      ...Array.from({ length: 3 }, () => ({ status: 503, headers: { 'retry-after': '60' } })),
    );
    const started = Date.now();
    const retries: number[] = [];
    const follower = proxied.changes.follow({
      after: '0',
      giveUpAfter: 1,
      onRetry: (_error, _attempt, delay) => retries.push(delay),
    });
    await expect(follower.next()).rejects.toMatchObject({ status: 503 });
    expect(retries[0]).toBeLessThanOrEqual(1);
    expect(Date.now() - started).toBeLessThan(15_000);
    canned.length = 0;
  });

  it('ends on what retrying cannot fix: a 400, or an expired cursor as its own error', async () => {
    // Another organization's cursor: bound to it, so a 400 naming `after` here.
    const theirs = (await sdk.changes.list({ after: '0', limit: 1 })).next_cursor;
    const refused = await drain(proxied, { after: theirs }).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(PlatformValidationError);
    expect((refused as PlatformValidationError).errors?.map((e) => e.path)).toEqual([
      'query.after',
    ]);
    const org = (await server.createOrganization()).id;
    const { token } = await server.createToken(org, ['all']);
    const aging = createClient({ baseUrl: server.url, token });
    await aging.courses.create({ body: { code: 'AGE', title: 'Aged' } });
    const postgres = server.config.database.type === 'postgres';
    const aged = new Date(Date.now() - 31 * 86_400_000);
    await server.dataSource.query(
      postgres
        ? 'UPDATE events SET created_at = $1 WHERE organization_id = $2'
        : 'UPDATE events SET created_at = ? WHERE organization_id = ?',
      [postgres ? aged : aged.toISOString().replace('T', ' ').replace('Z', ''), org],
    );
    const retries: unknown[] = [];
    const expired = aging.changes.follow({ after: '0', onRetry: (error) => retries.push(error) });
    const error = await expired.next().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PlatformCursorExpiredError);
    expect((error as PlatformCursorExpiredError).status).toBe(410);
    expect((error as Error).message).toContain('Start again from an export');
    expect(retries).toEqual([]);
  });
});

it('reads the feed as changes.list, and the deprecated events.changes and events.follow still do', async () => {
  await sdk.courses.create({ body: { code: 'FOL-ALIAS', title: 'Alias' } });
  const page = await sdk.changes.list({ after: 'oldest', limit: 1000 });
  expect(page.data.length).toBeGreaterThan(0);
  expect(await sdk.events.changes({ after: 'oldest', limit: 1000 })).toEqual(page);
  const old = sdk.events.follow({ after: 'oldest', untilCaughtUp: true });
  const viaAlias: (number | null)[] = [];
  for await (const event of old) viaAlias.push(event.position);
  expect(viaAlias).toEqual(page.data.map((event) => event.position));
  expect(old.cursor).toBe(page.next_cursor);
});

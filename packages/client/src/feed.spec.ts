/**
 * `client.events.follow()` against the real server: it yields every change after the cursor in
 * feed order, resumes from `follower.cursor` without repeating or skipping, and a live follower
 * wakes on a change committed while it waits.
 */
import { startTestServer, type TestServer } from '@platform/server/testing';
import { createClient, type PlatformClient } from './index';

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

  const follower = sdk.events.follow({ limit: 2, untilCaughtUp: true });
  const seen: [number | null, string][] = [];
  for await (const event of follower) {
    seen.push([event.position, event.type]);
    if (seen.length === 3) break;
  }
  expect(follower.cursor).toBe('3');
  const rest = sdk.events.follow({ after: follower.cursor, limit: 2, untilCaughtUp: true });
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
  expect(rest.cursor).toBe('7');
});

it('waits when caught up and yields a change as soon as it commits, until aborted', async () => {
  const controller = new AbortController();
  const head = sdk.events.follow({ untilCaughtUp: true });
  for await (const _ of head) void _;
  const live = sdk.events.follow({ after: head.cursor, signal: controller.signal, wait: '10s' });
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

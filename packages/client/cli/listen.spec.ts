/**
 * `platform-listen` against the real server and a real handler on loopback: what it forwards is a
 * delivery `verifyWebhook` accepts with the printed secret, in feed order with the previous
 * position chained, from now on; a filter and `--print-json`; an API restart waited out with
 * nothing lost or repeated; a failing handler does not stop it; what it refuses.
 */
import { startTestServer, type TestServer } from '@platform/server/testing';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { createClient, type Event, type PlatformClient, verifyWebhook } from '../src/index';
import { type LocalServer, startLocalServer } from '../test/local-server';
import { main, newSecret } from './listen';

let server: TestServer;
let sdk: PlatformClient;
let token: string;
let handler: LocalServer;
/** What the handler answers to the request at each index: 204 when unset, nothing for 0. */
let answers: number[] = [];

beforeAll(async () => {
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL,
    redisUrl: process.env.TEST_REDIS_URL,
    env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
  });
  const organization = await server.createOrganization();
  ({ token } = await server.createToken(organization.id, ['all']));
  sdk = createClient({ baseUrl: server.url, token });
  handler = await startLocalServer((_req, res, index) => {
    const status = answers[index] ?? 204;
    if (status === 0) return;
    res.writeHead(status, status === 307 ? { location: '/elsewhere' } : {}).end();
  });
});

afterAll(async () => {
  await handler?.close();
  await server?.close();
});

beforeEach(() => {
  handler.requests.length = 0;
  answers = [];
});

/** Runs the command in-process until `stop`, collecting what it prints. */
function run(args: string[], env: Record<string, string> = {}) {
  const controller = new AbortController();
  const out: string[] = [];
  const err: string[] = [];
  const exit = main(
    args,
    { PLATFORM_URL: server.url, PLATFORM_TOKEN: token, ...env },
    {
      stdout: (line) => out.push(line),
      stderr: (line) => err.push(line),
      signal: controller.signal,
    },
  );
  return {
    out,
    err,
    exit,
    stop: () => {
      controller.abort();
      return exit;
    },
  };
}

async function until(what: string, ready: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const started = (err: string[]) => () => err.some((line) => line.startsWith('Ready: '));

/** Each request the handler received, verified with `secret` as a receiver would. */
async function verified(secret: string): Promise<Event[]> {
  return Promise.all(
    handler.requests.map((request) =>
      verifyWebhook(request.body, request.headers as Record<string, string>, secret),
    ),
  );
}

/** The id of the record an event is about. */
const idOf = (event: Event) => (event.data as { id: string }).id;

async function newCourse(code: string) {
  return sdk.courses.create({ body: { code, title: `Listen ${code}` } });
}

it('forwards each change from now on, signed with the secret, in feed order with the previous position', async () => {
  const before = await newCourse('LIS-0');
  // The newest event is then a ping, which has no position: "now" is still after LIS-0.
  const pings = await startLocalServer((_req, res) => res.writeHead(204).end());
  const endpoint = await sdk.webhookEndpoints.create({
    body: { url: pings.url, events: ['exam.created'] },
  });
  await sdk.webhookEndpoints.test({ params: { id: endpoint.id } });
  await sdk.webhookEndpoints.delete({ params: { id: endpoint.id } });
  await pings.close();
  const secret = newSecret();
  const listener = run(['--forward-to', `${handler.url}/hooks`, '--secret', secret]);
  await until('ready', started(listener.err));
  expect(listener.err.join('\n')).not.toContain(secret);
  const course = await newCourse('LIS-1');
  await sdk.courses.update({ params: { id: course.id }, body: { title: 'Renamed' } });
  await sdk.courses.delete({ params: { id: course.id } });
  await until(
    'three answers',
    () => listener.err.filter((line) => line.startsWith('<-- [204] POST ')).length === 3,
  );

  const events = await verified(secret);
  const [created, updated, deleted] = events as [Event, Event, Event];
  const feed = await sdk.changes.list({ after: 'oldest', limit: 1000 });
  const start = feed.data.find((event) => idOf(event) === before.id)!.position!;
  const after = feed.data.filter((event) => event.position! > start);
  expect(events.map((e) => [e.id, e.type, e.position, e.cursor])).toEqual(
    after.map((e) => [e.id, e.type, e.position, e.cursor]),
  );
  expect(events.map((e) => e.type)).toEqual(['course.created', 'course.updated', 'course.deleted']);
  expect(events.map((e) => e.previous_position)).toEqual([
    null,
    created.position,
    updated.position,
  ]);
  expect(updated).toMatchObject({ previous_attributes: { title: 'Listen LIS-1' } });
  expect(
    handler.requests.map((r) => [
      r.path,
      r.headers['webhook-position'],
      r.headers['webhook-previous-position'],
    ]),
  ).toEqual([
    ['/hooks', String(created.position), undefined],
    ['/hooks', String(updated.position), String(created.position)],
    ['/hooks', String(deleted.position), String(updated.position)],
  ]);
  expect(listener.err).toContainEqual(
    `--> course.updated [${updated.id}] position ${updated.position}`,
  );
  expect(handler.requests).toHaveLength(3);

  await expect(listener.stop()).resolves.toBe(0);
  expect(listener.err.at(-1)).toBe(
    `Stopped after position ${deleted.position}: resume with --after ${deleted.cursor}`,
  );
});

it('prints only the types asked for with --print-json, chaining the previous position among them', async () => {
  const listener = run(['--print-json', '--events', 'student.created,course.deleted']);
  await until('ready', started(listener.err));
  const course = await newCourse('LIS-2');
  const student = await sdk.students.create({
    body: { student_number: 'LIS-S1', first_name: 'Ada', last_name: 'Listen' },
  });
  await sdk.courses.delete({ params: { id: course.id } });
  await until('two events', () => listener.out.length === 2);
  await expect(listener.stop()).resolves.toBe(0);

  const printed = listener.out.map((line) => JSON.parse(line) as Event);
  expect(printed.map((e) => [e.type, idOf(e)])).toEqual([
    ['student.created', student.id],
    ['course.deleted', course.id],
  ]);
  expect(printed.map((e) => e.previous_position)).toEqual([null, printed[0]!.position]);
  expect(handler.requests).toHaveLength(0);
});

it('waits out the API stopped and started again, and forwards every change once', async () => {
  const secret = newSecret();
  const listener = run(['--forward-to', handler.url, '--secret', secret]);
  await until('ready', started(listener.err));
  const first = await newCourse('LIS-3');
  await until('the first delivery', () => handler.requests.length === 1);

  await server.stop();
  await until('a retry', () =>
    listener.err.some((line) => line.startsWith('The API did not answer')),
  );
  await server.start();
  const second = await newCourse('LIS-4');
  const third = await newCourse('LIS-5');
  await until('three deliveries', () => handler.requests.length === 3);
  await until('the catch-up', () => listener.err.some((line) => line.startsWith('Caught up: ')));
  await expect(listener.stop()).resolves.toBe(0);

  const events = await verified(secret);
  expect(events.map(idOf)).toEqual([first.id, second.id, third.id]);
  expect(events.map((e) => e.previous_position)).toEqual([
    null,
    events[0]!.position,
    events[1]!.position,
  ]);
});

it('resumes after --after with a new secret it prints; what the handler answers is not retried or followed', async () => {
  const course = await newCourse('LIS-6');
  const resumeFrom = (await sdk.changes.list({ after: 'oldest', limit: 1000 })).data.at(
    -2,
  )!.cursor!;
  await sdk.courses.delete({ params: { id: course.id } });
  answers = [500, 307];
  const listener = run(['--forward-to', handler.url, '--after', resumeFrom]);
  await until('two answers', () => listener.err.filter((l) => l.startsWith('<-- ')).length === 2);
  await until('the catch-up', () => listener.err.some((line) => line.startsWith('Caught up: ')));
  expect(
    listener.err.filter((line) => line.startsWith('<-- ')).map((line) => line.slice(0, 9)),
  ).toEqual(['<-- [500]', '<-- [307]']);
  expect(handler.requests.map((r) => r.path)).toEqual(['/', '/']);
  const secret = /signed with (whsec_\S+) /.exec(listener.err.join('\n'))?.[1];
  const events = await verified(secret!);
  expect(events.map((e) => [e.type, idOf(e)])).toEqual([
    ['course.created', course.id],
    ['course.deleted', course.id],
  ]);
  await expect(listener.stop()).resolves.toBe(0);
  expect(listener.err.at(-1)).toBe(
    `Stopped after position ${events[1]!.position}: resume with --after ${events[1]!.cursor}`,
  );

  const gone = run(['--forward-to', 'http://127.0.0.1:9/hooks', '--after', resumeFrom]);
  await until('two attempts', () => gone.err.filter((l) => l.startsWith('<-- ')).length === 2);
  expect(gone.err.filter((line) => line.startsWith('<-- '))).toEqual([
    expect.stringMatching(/^<-- \[ERR\] POST http:\/\/127\.0\.0\.1:9\/hooks: .+ \[evt_/),
    expect.stringMatching(/^<-- \[ERR\] POST /),
  ]);
  await expect(gone.stop()).resolves.toBe(0);
});

it('stops on Ctrl-C while the handler has not answered, and resumes at that event', async () => {
  const course = await newCourse('LIS-7');
  const [before] = (await sdk.changes.list({ after: 'oldest', limit: 1000 })).data.slice(-2) as [
    Event,
  ];
  await newCourse('LIS-8');
  answers = [0];
  const listener = run(['--forward-to', handler.url, '--after', before.cursor!]);
  await until('the first POST', () => handler.requests.length === 1);
  expect(JSON.parse(handler.requests[0]!.body)).toMatchObject({ data: { id: course.id } });
  // Without the stop reaching the POST, it would wait out the handler's 30 s and time out here.
  await expect(listener.stop()).resolves.toBe(0);
  expect(listener.err.slice(-2)).toEqual([
    expect.stringMatching(/^<-- \[--\] POST .*: stopped before it answered \[evt_/),
    `Stopped after position ${before.position}: resume with --after ${before.cursor}`,
  ]);
  expect(handler.requests).toHaveLength(1);
});

it('ends with 1 and the reason when the API refuses', async () => {
  const narrow = await server.createToken((await server.createOrganization()).id, [
    'students:read',
  ]);
  const noAccess = run(['--print-json'], { PLATFORM_TOKEN: narrow.token });
  await expect(noAccess.exit).resolves.toBe(1);
  expect(noAccess.err.join('\n')).toMatch(/^The API refused: 403 .*events:read/m);

  const unknown = run(['--print-json', '--events', 'course.flown']);
  await expect(unknown.exit).resolves.toBe(1);
  expect(unknown.err.join('\n')).toMatch(/^The API refused: 400 .*course\.flown/m);

  const wrongToken = run(['--print-json'], { PLATFORM_TOKEN: 'pat_not_a_token' });
  await expect(wrongToken.exit).resolves.toBe(1);
  expect(wrongToken.err.join('\n')).toMatch(/^The API refused: 401 /m);

  // A cursor of another organization's feed: refused, not read from.
  const other = await server.createToken((await server.createOrganization()).id, ['all']);
  const theirs = createClient({ baseUrl: server.url, token: other.token });
  await theirs.courses.create({ body: { code: 'LIS-O', title: 'Theirs' } });
  const cursor = (await theirs.changes.list({ after: 'oldest' })).next_cursor;
  const foreign = run(['--print-json', '--after', cursor]);
  await expect(foreign.exit).resolves.toBe(1);
  expect(foreign.err.join('\n')).toMatch(
    /^The API refused: 400 .*not a cursor of this organization/m,
  );
});

it.each([
  [[], 'say where the events go: --forward-to <url>, or --print-json'],
  [
    ['--forward-to', 'http://127.0.0.1:1/', '--print-json'],
    '--forward-to and --print-json: choose one',
  ],
  [
    ['--forward-to', 'ftp://127.0.0.1/'],
    "--forward-to must be an http or https URL, got 'ftp://127.0.0.1/'",
  ],
  [
    ['--print-json', '--after', '1.5'],
    "--after must be a feed cursor (an event's cursor, as printed when a run stops) or 'oldest', got '1.5'",
  ],
  [
    ['--print-json', '--after', '42'],
    "--after must be a feed cursor (an event's cursor, as printed when a run stops) or 'oldest', got '42'",
  ],
  [
    ['--print-json', '--events', 'course created'],
    '--events must be event types separated by commas',
  ],
  [
    ['--print-json', '--secret', 'whsec_c2hvcnQ='],
    '--secret must be whsec_ followed by the base64 of 24 to 64 bytes',
  ],
  [['--print-json', '--base-url', ''], '--base-url is required (or set PLATFORM_URL)'],
  [['--print-json', '--wat'], "Unknown option '--wat'"],
])('refuses %j as a usage error (exit 2) naming what is wrong', async (args, message) => {
  const listener = run(args);
  await expect(listener.exit).resolves.toBe(2);
  expect(listener.err[0]).toContain(message);
  expect(listener.err.join('\n')).not.toContain('c2hvcnQ');
  expect(handler.requests).toHaveLength(0);
});

it('runs as `pnpm platform listen`, the SDK command behind the admin CLI', () => {
  const root = path.join(__dirname, '..', '..', '..');
  const result = spawnSync(
    process.execPath,
    [path.join(root, 'tooling', 'platform-bin', 'platform.js'), 'listen', '--help'],
    { encoding: 'utf8' },
  );
  expect(result.status).toBe(0);
  expect(result.stdout).toMatch(/^Usage: platform-listen --forward-to <url>/);
});

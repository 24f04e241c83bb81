/**
 * `platform-listen`: an organization's changes delivered to a local address as signed webhooks,
 * with no public URL and no tunnel. It follows the change feed over the API with a token
 * (long-polling, so it works against any instance of a scale-out deployment), signs each event
 * with a session secret as an endpoint's deliveries are signed (Standard Webhooks), POSTs it, and
 * prints what the handler answered. When the API goes away it backs off and resumes from the
 * cursor of the last change it forwarded, so nothing is lost or sent twice.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import {
  type Client,
  type EventType,
  type ListFilter,
  createClient,
  PlatformApiError,
  PlatformCursorExpiredError,
  PlatformError,
  signWebhook,
  VERSION,
} from '../src/index';

export const USAGE = `Usage: platform-listen --forward-to <url> [options]
       platform-listen --print-json [options]

Delivers the organization's changes to a local address as webhooks, without a public URL: it
follows the change feed (GET /v1/changes) with your token and POSTs each event, signed with a
session secret exactly as an endpoint's deliveries are signed.

  --forward-to <url>   POST each event here (http or https), e.g. http://127.0.0.1:8000/hooks
  --print-json         print each event on stdout, one JSON line each, instead of forwarding
  --events <types>     only these event types, comma-separated (payment.failed,student.created)
  --after <cursor>     start after this feed cursor (an event's cursor; the one printed when a
                       run stops resumes it), or 'oldest' for every change still kept;
                       default: from now on
  --secret <whsec_…>   sign with this secret instead of a new one, so a handler keeps its
                       configuration across runs (or PLATFORM_LISTEN_SECRET); not printed
  --token <token>      an API token with events:read and each type's read scope
                       (or PLATFORM_TOKEN)
  --base-url <url>     the API's address, e.g. https://api.school.example (or PLATFORM_URL)
  -h, --help           this text

Each run is a chain of its own: the first event it sends has previous_position null. What the
handler answers is printed, not retried; redirects are not followed. Status lines go to stderr.
Once following, it never gives up on the API: an outage or a restart is waited out and reading
resumes where it stopped. On the way out it prints the cursor to resume from.

Exit codes: 0 stopped by SIGINT or SIGTERM; 1 the API refused (a token without access, an
unknown event type, a cursor older than the changes kept or of another organization) or,
without --after, could not be
reached at the start; 2 a usage error.`;

/** How long the local handler has to answer one delivery. */
const FORWARD_TIMEOUT_MS = 30_000;
/** A feed cursor as the API issues it: the position, a dot, the organization's tag; or `0`. */
const CURSOR = /^(0|(0|[1-9][0-9]{0,17})\.[A-Za-z0-9_-]{10})$/;

/** The position a cursor names: the number before its dot (the documented part). */
const positionOf = (cursor: string) => cursor.split('.')[0]!;

export class UsageError extends Error {}

export interface ListenOptions {
  token: string;
  baseUrl: string;
  /** Where to POST each event; undefined prints them instead (`--print-json`). */
  forwardTo: string | undefined;
  /** The feed's `type` filter, comma-separated. */
  events: string | undefined;
  /** A feed cursor or `oldest`; undefined starts from now. */
  after: string | undefined;
  secret: string;
  /** Whether the secret came from `--secret` or PLATFORM_LISTEN_SECRET (then it is not printed). */
  secretGiven: boolean;
}

/** Where the command writes, and what stops it. */
export interface ListenIo {
  stdout(line: string): void;
  stderr(line: string): void;
  signal: AbortSignal;
}

/** A new session secret: `whsec_` and 32 random bytes in base64, as an endpoint's. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function httpUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${name} must be an absolute http or https URL, got '${value}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${name} must be an http or https URL, got '${value}'`);
  return value;
}

function required(name: string, value: string | undefined, env: string): string {
  if (value === undefined || value === '')
    throw new UsageError(`${name} is required (or set ${env})`);
  return value;
}

/** A secret as endpoints have them: `whsec_` and base64 of 24 to 64 bytes. */
function checkSecret(secret: string): string {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : '';
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.toString('base64') !== encoded || bytes.length < 24 || bytes.length > 64)
    throw new UsageError(
      `--secret must be whsec_ followed by the base64 of 24 to 64 bytes (as an endpoint's signing secret); the one given is not`,
    );
  return secret;
}

/** The command line (and environment) as the listener's options; a UsageError naming the fault. */
export function parseCommandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ListenOptions | 'help' {
  if (typeof parseArgs !== 'function')
    throw new UsageError(`platform-listen needs Node 18.3 or newer; this is ${process.version}`);
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        'forward-to': { type: 'string' },
        'print-json': { type: 'boolean' },
        events: { type: 'string' },
        after: { type: 'string' },
        secret: { type: 'string' },
        token: { type: 'string' },
        'base-url': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return 'help';
  const forwardTo = values['forward-to'];
  if (forwardTo === undefined && !values['print-json'])
    throw new UsageError('say where the events go: --forward-to <url>, or --print-json');
  if (forwardTo !== undefined && values['print-json'])
    throw new UsageError('--forward-to and --print-json: choose one');
  const { after, events } = values;
  const secret = values.secret ?? env.PLATFORM_LISTEN_SECRET;
  if (after !== undefined && after !== 'oldest' && !CURSOR.test(after))
    throw new UsageError(
      `--after must be a feed cursor (an event's cursor, as printed when a run stops) or 'oldest', got '${after}'`,
    );
  if (events !== undefined && !/^[a-z_]+\.[a-z_]+(,[a-z_]+\.[a-z_]+)*$/.test(events))
    throw new UsageError(
      `--events must be event types separated by commas (student.created,payment.failed), got '${events}'`,
    );
  return {
    token: required('--token', values.token ?? env.PLATFORM_TOKEN, 'PLATFORM_TOKEN'),
    baseUrl: httpUrl(
      '--base-url',
      required('--base-url', values['base-url'] ?? env.PLATFORM_URL, 'PLATFORM_URL'),
    ),
    forwardTo: forwardTo === undefined ? undefined : httpUrl('--forward-to', forwardTo),
    events,
    after,
    secret: secret === undefined ? newSecret() : checkSecret(secret),
    secretGiven: secret !== undefined,
  };
}

/**
 * Where a run from now starts: the cursor of the change with the highest position among the
 * newest the token may read (a `ping` has none; positions follow commit order, `created_at`
 * nearly so), else `oldest`.
 */
async function newestCursor(client: Client, events: string | undefined): Promise<string> {
  // The server checks the types (a 400 naming an unknown one); the SDK's type is for literals.
  const type = events as ListFilter<EventType> | undefined;
  const query = { per_page: 100, ...(type !== undefined && { type }) };
  let newest: { position: number; cursor: string } | null = null;
  for (const { position, cursor } of (await client.events.list(query)).data)
    if (position !== null && cursor !== null && position > (newest?.position ?? 0))
      newest = { position, cursor };
  if (newest === null)
    for await (const event of client.events.listAll(query))
      if (event.cursor !== null) return event.cursor;
  return newest?.cursor ?? 'oldest';
}

/** Why a POST got no answer, in a few words. */
function failure(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError')
    return `no answer in ${FORWARD_TIMEOUT_MS / 1000} s`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused (is the handler running?)';
  return cause?.message ?? (error as Error).message;
}

/** An AbortSignal for one POST: aborted by `stop`, or after `ms` (Node 18 has no `AbortSignal.any`). */
function bounded(stop: AbortSignal, ms: number): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const onStop = () => controller.abort(stop.reason);
  const timer = setTimeout(
    () => controller.abort(new DOMException('The handler did not answer', 'TimeoutError')),
    ms,
  );
  stop.addEventListener('abort', onStop, { once: true });
  return {
    signal: controller.signal,
    release: () => {
      clearTimeout(timer);
      stop.removeEventListener('abort', onStop);
    },
  };
}

/**
 * POSTs one delivery and says what came back (`[200] POST url (4 ms)`); `done` is false when the
 * command was stopped before the handler answered, so the event is forwarded again on resume.
 * Redirects are not followed, as the server's deliveries do not follow them.
 */
async function forward(
  url: string,
  body: string,
  headers: Record<string, string>,
  stop: AbortSignal,
): Promise<{ line: string; done: boolean }> {
  const started = performance.now();
  const { signal, release } = bounded(stop, FORWARD_TIMEOUT_MS);
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body,
      signal,
      redirect: 'manual',
    });
    await response.arrayBuffer();
    const ms = Math.round(performance.now() - started);
    return { line: `[${response.status}] POST ${url} (${ms} ms)`, done: true };
  } catch (error) {
    if (stop.aborted) return { line: `[--] POST ${url}: stopped before it answered`, done: false };
    return { line: `[ERR] POST ${url}: ${failure(error)}`, done: true };
  } finally {
    release();
  }
}

/** The headers of a delivery, as an endpoint's: signed, with the positions of the change. */
async function deliveryHeaders(
  body: string,
  secret: string,
  position: number,
  previous: number | null,
): Promise<Record<string, string>> {
  return {
    'content-type': 'application/json',
    'user-agent': `platform-listen/${VERSION}`,
    ...(await signWebhook(body, secret)),
    'webhook-position': String(position),
    ...(previous !== null && { 'webhook-previous-position': String(previous) }),
  };
}

function refusal(error: unknown): string {
  if (error instanceof PlatformCursorExpiredError)
    return `${error.message}\nStart again without --after (from now on) or with --after oldest.`;
  if (error instanceof PlatformApiError) return `The API refused: ${error.message}`;
  return `Stopped: ${error instanceof Error ? error.message : String(error)}`;
}

function readyLine(options: ListenOptions, after: string): string {
  const { forwardTo, events, secret, secretGiven } = options;
  const from = after === 'oldest' ? 'from the oldest kept' : `after position ${positionOf(after)}`;
  const what = `${events === undefined ? 'every change' : events} ${from}`;
  if (forwardTo === undefined) return `Ready: printing ${what} (Ctrl-C to stop)`;
  // A secret of the caller's own is not echoed (it may be an endpoint's); a new one must be.
  const signing = secretGiven ? 'signed with the given secret' : `signed with ${secret}`;
  return `Ready: forwarding ${what} to ${forwardTo}, ${signing} (Ctrl-C to stop)`;
}

/** Follows the feed and forwards (or prints) each change until `io.signal` aborts. */
export async function listen(options: ListenOptions, io: ListenIo): Promise<number> {
  const client = createClient({ baseUrl: options.baseUrl, token: options.token });
  const { forwardTo, events, secret } = options;
  let announceCatchUp = options.after !== undefined;
  /** Where a new run picks up: past the last change forwarded (or printed) in full. */
  let resume: string | undefined;
  const stopped = (code: number) => {
    if (resume !== undefined)
      io.stderr(
        resume === 'oldest'
          ? 'Stopped before the first change: resume with --after oldest'
          : `Stopped after position ${positionOf(resume)}: resume with --after ${resume}`,
      );
    return code;
  };
  try {
    const after = options.after ?? (await newestCursor(client, events));
    resume = after;
    const follower = client.changes.follow({
      after,
      ...(events !== undefined && { type: events }),
      signal: io.signal,
      onRetry: (error, _attempt, delay) => {
        announceCatchUp = true;
        io.stderr(
          `The API did not answer (${error.message}); reading again in ${delay.toFixed(1)} s from position ${positionOf(follower.cursor)}`,
        );
      },
      onCaughtUp: (cursor) => {
        if (announceCatchUp)
          io.stderr(`Caught up: every change to position ${positionOf(cursor)} is through`);
        announceCatchUp = false;
      },
    });
    io.stderr(readyLine(options, after));
    let previous: number | null = null;
    for await (const event of follower) {
      if (io.signal.aborted) break;
      const cursor = follower.cursor;
      const { id, position, cursor: own, ...rest } = event;
      const at = position ?? 0;
      // In the order of an endpoint's delivery: position, cursor, then this run's chain.
      const body = JSON.stringify({
        id,
        position,
        cursor: own,
        previous_position: previous,
        ...rest,
      });
      if (forwardTo === undefined) io.stdout(body);
      else {
        io.stderr(`--> ${event.type} [${id}] position ${at}`);
        const headers = await deliveryHeaders(body, secret, at, previous);
        const { line, done } = await forward(forwardTo, body, headers, io.signal);
        io.stderr(`<-- ${line} [${id}]`);
        if (!done) break;
      }
      resume = cursor;
      previous = at;
    }
    return stopped(0);
  } catch (error) {
    if (!(error instanceof PlatformError)) throw error;
    io.stderr(refusal(error));
    return stopped(1);
  }
}

/** The whole command: parse, then listen; the exit code. */
export async function main(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: ListenIo,
): Promise<number> {
  let options;
  try {
    options = parseCommandLine(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`platform-listen: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (options === 'help') {
    io.stdout(USAGE);
    return 0;
  }
  return listen(options, io);
}

/**
 * `platform-listen`: an organization's changes delivered to a local address as signed webhooks,
 * with no public URL and no tunnel. It follows the change feed over the API with a token
 * (long-polling, so it works against any instance of a scale-out deployment), signs each event
 * with a session secret as an endpoint's deliveries are signed (Standard Webhooks), POSTs it, and
 * prints what the handler answered. When the API goes away it backs off and resumes from the last
 * position it forwarded, so nothing is lost or sent twice.
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
  --after <position>   start after this feed position (to resume where a run stopped), or
                       'oldest' for every change still kept; default: from now on
  --secret <whsec_…>   sign with this secret instead of a new one, so a handler keeps its
                       configuration across runs
  --token <token>      an API token with events:read and each type's read scope
                       (or PLATFORM_TOKEN)
  --base-url <url>     the API's address, e.g. https://api.school.example (or PLATFORM_URL)
  -h, --help           this text

Status lines go to stderr. Once started it never gives up on the API: an outage or a restart is
waited out and reading resumes where it stopped. Exit codes: 0 stopped by SIGINT or SIGTERM,
1 the API could not be reached at the start, or refused (a token without access, an unknown
event type, a position older than the changes kept), 2 a usage error.`;

/** How long the local handler has to answer one delivery. */
const FORWARD_TIMEOUT_MS = 30_000;
const POSITION = /^(0|[1-9][0-9]{0,17})$/;

export class UsageError extends Error {}

export interface ListenOptions {
  token: string;
  baseUrl: string;
  /** Where to POST each event; undefined prints them instead (`--print-json`). */
  forwardTo: string | undefined;
  /** The feed's `type` filter, comma-separated. */
  events: string | undefined;
  /** A feed position or `oldest`; undefined starts from now. */
  after: string | undefined;
  secret: string;
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
  if (after !== undefined && after !== 'oldest' && !POSITION.test(after))
    throw new UsageError(
      `--after must be a feed position (0, 1, 2, …) or 'oldest', got '${after}'`,
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
    secret: values.secret === undefined ? newSecret() : checkSecret(values.secret),
  };
}

/** Where a run from now starts: the position of the newest change the token may read. */
async function newestPosition(client: Client, events: string | undefined): Promise<string> {
  // The server checks the types (a 400 naming an unknown one); the SDK's type is for literals.
  const type = events as ListFilter<EventType> | undefined;
  const page = await client.events.list({ per_page: 1, ...(type !== undefined && { type }) });
  const position = page.data[0]?.position;
  return position === undefined || position === null ? 'oldest' : String(position);
}

/** Why a POST got no answer, in a few words. */
function failure(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError')
    return `no answer in ${FORWARD_TIMEOUT_MS / 1000} s`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused (is the handler running?)';
  return cause?.message ?? (error as Error).message;
}

/** POSTs one delivery and says what came back: `[200] POST url (4 ms)`. */
async function forward(
  url: string,
  body: string,
  secret: string,
  position: number,
  previous: number | null,
): Promise<string> {
  const headers = {
    'content-type': 'application/json',
    'user-agent': `platform-listen/${VERSION}`,
    ...(await signWebhook(body, secret)),
    'webhook-position': String(position),
    ...(previous !== null && { 'webhook-previous-position': String(previous) }),
  };
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await response.arrayBuffer();
    return `[${response.status}] POST ${url} (${Math.round(performance.now() - started)} ms)`;
  } catch (error) {
    return `[ERR] POST ${url}: ${failure(error)}`;
  }
}

function refusal(error: unknown): string {
  if (error instanceof PlatformCursorExpiredError)
    return `${error.message}\nStart again without --after (from now on) or with --after oldest.`;
  if (error instanceof PlatformApiError) return `The API refused: ${error.message}`;
  return `Stopped: ${error instanceof Error ? error.message : String(error)}`;
}

/** Follows the feed and forwards (or prints) each change until `io.signal` aborts. */
export async function listen(options: ListenOptions, io: ListenIo): Promise<number> {
  const client = createClient({ baseUrl: options.baseUrl, token: options.token });
  const { forwardTo, events, secret } = options;
  let announceCatchUp = options.after !== undefined;
  try {
    const after = options.after ?? (await newestPosition(client, events));
    const follower = client.changes.follow({
      after,
      ...(events !== undefined && { type: events }),
      signal: io.signal,
      onRetry: (error, _attempt, delay) => {
        announceCatchUp = true;
        io.stderr(
          `The API did not answer (${error.message}); reading again in ${delay.toFixed(1)} s from position ${follower.cursor}`,
        );
      },
      onCaughtUp: (cursor) => {
        if (announceCatchUp) io.stderr(`Caught up: every change to position ${cursor} is through`);
        announceCatchUp = false;
      },
    });
    io.stderr(
      `Ready: ${forwardTo === undefined ? 'printing' : `forwarding to ${forwardTo}`} ${events === undefined ? 'every change' : events} after position ${after}${forwardTo === undefined ? '' : `, signed with ${secret}`} (Ctrl-C to stop)`,
    );
    let previous: number | null = null;
    for await (const event of follower) {
      const { id, position, ...rest } = event;
      const body = JSON.stringify({ id, position, previous_position: previous, ...rest });
      const at = position ?? 0;
      if (forwardTo === undefined) io.stdout(body);
      else {
        io.stderr(`--> ${event.type} [${id}] position ${at}`);
        io.stderr(`<-- ${await forward(forwardTo, body, secret, at, previous)} [${id}]`);
      }
      previous = at;
    }
    io.stderr(`Stopped after position ${follower.cursor}: resume with --after ${follower.cursor}`);
    return 0;
  } catch (error) {
    if (!(error instanceof PlatformError)) throw error;
    io.stderr(refusal(error));
    return 1;
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

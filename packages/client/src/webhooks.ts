/**
 * Standard Webhooks (https://www.standardwebhooks.com) verification and signing, on Web Crypto
 * only, so the same code runs in Node 20+, browsers and edge runtimes. A verified payload is
 * checked against the contract's event catalogue and returned as the typed `Event` union.
 */
import { webCrypto } from './web-crypto';
import { checkEvent, eventDataModel } from './event-shape';
import type { Event } from './generated/types';
import { PlatformError } from './errors';
import { VERSION } from './version';

/** The request body as received: the exact bytes or text, before any JSON parsing. */
export type WebhookBody = string | Uint8Array | ArrayBuffer;

/**
 * The request headers: a `Headers` instance (fetch, edge runtimes) or a plain object such as
 * Node's `req.headers`. Names are matched in any case.
 */
export type WebhookHeaders =
  Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** The three Standard Webhooks headers a delivery carries (a type, so it is a `WebhookHeaders`). */
export type WebhookSignatureHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, either way, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The current time; tests pass a fixed one. Default `new Date()`. */
  now?: Date;
}

export interface SignWebhookOptions {
  /** The message id (`webhook-id`). Default a new `msg_…` id. */
  id?: string;
  /** When the message is sent (`webhook-timestamp`). Default now. */
  timestamp?: Date;
}

export type WebhookVerificationErrorReason =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_outside_tolerance'
  | 'no_valid_signature'
  | 'body_not_raw'
  | 'invalid_secret'
  | 'invalid_payload'
  | 'unknown_event_type';

/** `verifyWebhook` refused the request; `reason` says why, the message says what to fix. */
export class WebhookVerificationError extends PlatformError {
  override name = 'WebhookVerificationError';
  readonly reason: WebhookVerificationErrorReason;
  /**
   * The parsed JSON of an authentically signed payload that is not an event this SDK knows
   * (`unknown_event_type`, `invalid_payload`); undefined for every other reason, so nothing
   * unauthenticated is ever handed out.
   */
  readonly payload: unknown;

  constructor(reason: WebhookVerificationErrorReason, message: string, payload?: unknown) {
    super(message);
    this.reason = reason;
    this.payload = payload;
  }
}

export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

const SECRET_PREFIX = 'whsec_';
const HEADER_NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
const RAW_BODY_HINT =
  'pass the raw request body exactly as received, not parsed and re-serialised JSON ' +
  "(Express: express.raw({ type: 'application/json' }) and req.body; fetch/edge: await request.text())";

/**
 * Checks a webhook delivery and returns its event, typed: narrow on `event.type`.
 *
 * `secret` is the endpoint's signing secret (`whsec_…`); during a rotation pass both the new
 * and the old one, and a signature by either is accepted. Throws `WebhookVerificationError`.
 */
export async function verifyWebhook(
  rawBody: WebhookBody,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Promise<Event> {
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  // NaN (an unset environment variable through Number()) or Infinity would accept any timestamp.
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new RangeError(
      `toleranceSeconds must be a finite number of seconds >= 0 (default ${DEFAULT_WEBHOOK_TOLERANCE_SECONDS}), ` +
        `got ${typeof tolerance === 'string' ? JSON.stringify(tolerance) : String(tolerance)}: ` +
        'anything else would turn off the replay check',
    );
  }
  const keys = decodeSecrets(secret);
  const body = toBytes(rawBody);
  if (!body) throw notRawBody(rawBody);

  const { id, timestamp, signature } = readHeaders(headers);
  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new WebhookVerificationError(
      'invalid_timestamp',
      `The webhook-timestamp header ${JSON.stringify(timestamp)} is not a Unix time in whole seconds.`,
    );
  }
  const nowMs = options.now ? options.now.getTime() : Date.now();
  if (!Number.isFinite(nowMs)) throw new RangeError('now must be a valid Date');
  const nowSeconds = Math.floor(nowMs / 1000);
  const age = nowSeconds - Number(timestamp);
  if (Math.abs(age) > tolerance) {
    const when = age > 0 ? `${age} s in the past` : `${-age} s in the future`;
    throw new WebhookVerificationError(
      'timestamp_outside_tolerance',
      `The webhook-timestamp is ${when}, outside the ${tolerance} s tolerance: ` +
        `${age > 0 ? 'an old message replayed, or one held up on the way' : 'not sent yet by our clock'}. ` +
        "Check that this machine's clock is right (NTP); for a stored message you mean to " +
        're-check, pass a matching `now` or a larger `toleranceSeconds`.',
    );
  }

  const candidates = parseSignatures(signature);
  const signed = signedContent(id, timestamp, body);
  const computed = await Promise.all(keys.map((key) => hmacSha256(key, signed)));
  if (!anyEqualConstantTime(candidates, computed)) {
    const text = decodeUtf8(body, false);
    if (looksReserialised(text)) {
      throw new WebhookVerificationError(
        'body_not_raw',
        'No signature matches this body, and the body is not in the compact form the Platform ' +
          `sends, so it was probably parsed and re-serialised on the way: ${RAW_BODY_HINT}. ` +
          "If it is the untouched body, check that the secret is this endpoint's signing secret.",
      );
    }
    const secrets = keys.length === 1 ? 'the secret' : `any of the ${keys.length} secrets`;
    const found =
      candidates.length === 0
        ? 'webhook-signature holds no v1 signature'
        : `none of the ${candidates.length} v1 signature(s) in webhook-signature matches this ` +
          `body signed with ${secrets} given`;
    throw new WebhookVerificationError(
      'no_valid_signature',
      `No valid signature: ${found}. Check that the ` +
        "secret is this endpoint's signing secret (each endpoint has its own; while a rotation " +
        `is under way pass both the new and the old one), and ${RAW_BODY_HINT}.`,
    );
  }

  return parseEvent(body);
}

/**
 * The Standard Webhooks headers for `payload`, signed with `secret` (with each secret, in one
 * space-separated `webhook-signature`, when given several). For tests and tools that replay
 * deliveries; send `payload` byte for byte as signed.
 */
export async function signWebhook(
  payload: WebhookBody,
  secret: string | readonly string[],
  options: SignWebhookOptions = {},
): Promise<WebhookSignatureHeaders> {
  const keys = decodeSecrets(secret);
  const body = toBytes(payload);
  if (!body) {
    throw new TypeError(
      `signWebhook signs bytes: pass the body as a string, Uint8Array or ArrayBuffer (JSON.stringify an event first), not ${describe(payload)}.`,
    );
  }
  const date = options.timestamp ?? new Date();
  const timestamp = String(Math.floor(date.getTime() / 1000));
  const id = options.id ?? (await newMessageId(date.getTime()));
  const signed = signedContent(id, timestamp, body);
  const signatures = await Promise.all(keys.map((key) => hmacSha256(key, signed)));
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': signatures.map((s) => `v1,${encodeBase64(s)}`).join(' '),
  };
}

// --- inputs ----------------------------------------------------------------------------------

function decodeSecrets(secret: string | readonly string[]): Uint8Array<ArrayBuffer>[] {
  const secrets: readonly unknown[] = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(secrets) || secrets.length === 0) {
    throw new WebhookVerificationError(
      'invalid_secret',
      "No webhook secret given: pass the endpoint's signing secret (whsec_…), or an array of them during a rotation.",
    );
  }
  return secrets.map((value, index) => {
    const which = secrets.length === 1 ? 'The webhook secret' : `Webhook secret #${index + 1}`;
    const returned =
      'Use the secret returned when the endpoint was created or its secret rotated (whsec_ followed by base64)';
    if (typeof value !== 'string' || !value.startsWith(SECRET_PREFIX)) {
      throw new WebhookVerificationError(
        'invalid_secret',
        `${which} does not start with "${SECRET_PREFIX}": it is not a webhook signing secret (an API token, perhaps?). ${returned}.`,
      );
    }
    const key = decodeBase64(value.slice(SECRET_PREFIX.length));
    if (!key || key.length === 0) {
      throw new WebhookVerificationError(
        'invalid_secret',
        `${which} is not "${SECRET_PREFIX}" followed by base64 (truncated or altered when it was copied?). ${returned}.`,
      );
    }
    return key;
  });
}

/** The body's bytes, or undefined when it is not a raw body (a parsed object, undefined, …). */
function toBytes(body: unknown): Uint8Array | undefined {
  if (typeof body === 'string') return new TextEncoder().encode(body);
  // isView and the tag work across realms (iframes, Jest's vm contexts), where instanceof does not.
  if (ArrayBuffer.isView(body))
    return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (Object.prototype.toString.call(body) === '[object ArrayBuffer]') {
    return new Uint8Array(body as ArrayBuffer);
  }
  return undefined;
}

function notRawBody(body: unknown): WebhookVerificationError {
  return new WebhookVerificationError(
    'body_not_raw',
    `The webhook body is ${describe(body)}, not a string, Uint8Array or ArrayBuffer: ${RAW_BODY_HINT}. ` +
      'The signature covers the exact bytes sent, which a parsed object no longer has.',
  );
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array (parsed JSON?)';
  if (typeof value === 'object') return 'an object (parsed JSON?)';
  return typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`;
}

function readHeaders(headers: WebhookHeaders | null | undefined): {
  id: string;
  timestamp: string;
  signature: string;
} {
  const get = headerGetter(headers);
  const values = HEADER_NAMES.map((name) => get(name)?.trim() ?? '');
  const missing = HEADER_NAMES.filter((_, i) => !values[i]);
  if (missing.length) {
    const names = missing.join(', ');
    throw new WebhookVerificationError(
      'missing_header',
      `Missing webhook header${missing.length > 1 ? 's' : ''} ${names}: a Platform delivery always ` +
        'carries webhook-id, webhook-timestamp and webhook-signature. Pass the request headers as ' +
        'received (req.headers or request.headers), and make sure no proxy in between drops them.',
    );
  }
  const [id, timestamp, signature] = values as [string, string, string];
  return { id, timestamp, signature };
}

function headerGetter(
  headers: WebhookHeaders | null | undefined,
): (name: string) => string | undefined {
  if (headers === null || typeof headers !== 'object') return () => undefined;
  // A Headers instance, from this realm or another (undici, node-fetch, a polyfill).
  if (typeof (headers as Headers).get === 'function') {
    return (name) => (headers as Headers).get(name) ?? undefined;
  }
  const plain = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  return (name) => {
    // Repeated headers arrive as arrays (Node's req.headers); a signature list may be split.
    const values = Object.keys(plain)
      .filter((key) => key.toLowerCase() === name)
      .flatMap((key) => plain[key] ?? []);
    return name === 'webhook-signature' ? values.join(' ') : values[0];
  };
}

/** The decoded `v1` signatures of the header; other versions are skipped, as the spec says. */
function parseSignatures(header: string): Uint8Array[] {
  const signatures: Uint8Array[] = [];
  for (const token of header.split(/\s+/)) {
    // Joined repeated headers (Headers#get) put ", " between entries; base64 has no commas.
    const [version, value] = token.replace(/,+$/, '').split(',', 2);
    if (version !== 'v1' || !value) continue;
    const bytes = decodeBase64(value);
    if (bytes) signatures.push(bytes);
  }
  return signatures;
}

// --- payload ---------------------------------------------------------------------------------

function parseEvent(body: Uint8Array): Event {
  const text = decodeUtf8(body, true);
  if (text === undefined) {
    throw new WebhookVerificationError(
      'invalid_payload',
      'The webhook body is signed but is not UTF-8 text, so not an event.',
    );
  }
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (error) {
    throw new WebhookVerificationError(
      'invalid_payload',
      `The webhook body is signed but is not JSON (${(error as Error).message}), so not an event.`,
    );
  }
  const type = isRecord(payload) ? payload.type : undefined;
  if (typeof type !== 'string') {
    throw new WebhookVerificationError(
      'invalid_payload',
      'The webhook payload is signed but is not an event: it has no string "type".',
      payload,
    );
  }
  const model = eventDataModel(type);
  if (model === undefined) {
    throw new WebhookVerificationError(
      'unknown_event_type',
      `Unknown event type "${type}": this SDK (@platform/client ${VERSION}) does not know it, ` +
        'probably because it is older than the API. Upgrade @platform/client; meanwhile the ' +
        "signature is valid and the error's `payload` holds the event, if you want to handle " +
        'or acknowledge it anyway.',
      payload,
    );
  }
  const found = checkEvent(payload as Record<string, unknown>, model);
  if (found.length > 0) {
    const issues = found.slice(0, 5);
    const more = found.length - issues.length;
    throw new WebhookVerificationError(
      'invalid_payload',
      `The webhook payload is signed but is not a valid "${type}" event: ${issues.join('; ')}` +
        `${more > 0 ? ` (and ${more} more)` : ''}. If the API is newer than this SDK ` +
        `(@platform/client ${VERSION}), upgrade it; the error's \`payload\` holds the event.`,
      payload,
    );
  }
  // The payload itself: fields a newer API added are kept.
  return payload as Event;
}

/**
 * The Platform sends `JSON.stringify` output. A JSON body in any other form (indented, spaced,
 * with escapes) did not come from it as is: something parsed and re-serialised it.
 */
function looksReserialised(text: string | undefined): boolean {
  if (text === undefined) return false;
  if (text === '[object Object]') return true;
  try {
    return JSON.stringify(JSON.parse(text)) !== text;
  } catch {
    return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function decodeUtf8(bytes: Uint8Array, fatal: boolean): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal }).decode(bytes);
  } catch {
    return undefined;
  }
}

// --- crypto ----------------------------------------------------------------------------------

/** `<id>.<timestamp>.<body>`, as bytes: the body is signed as received, never re-encoded. */
function signedContent(id: string, timestamp: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix, 0);
  content.set(body, prefix.length);
  return content;
}

async function hmacSha256(
  key: Uint8Array<ArrayBuffer>,
  data: Uint8Array<ArrayBuffer>,
): Promise<Uint8Array> {
  const subtle = (await webCrypto())?.subtle;
  if (!subtle) {
    throw new PlatformError(
      'Web Crypto (crypto.subtle) is not available: verifying webhooks needs Node 18+, an edge ' +
        'runtime, or a browser page served over https.',
    );
  }
  const cryptoKey = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  return new Uint8Array(await subtle.sign('HMAC', cryptoKey, data));
}

/**
 * Whether any candidate equals any computed signature. Every pair is compared over every byte,
 * with no early exit, so the time taken says nothing about how close a forgery came.
 */
function anyEqualConstantTime(candidates: Uint8Array[], computed: Uint8Array[]): boolean {
  let matches = 0;
  for (const candidate of candidates) {
    for (const expected of computed) {
      // Lengths are public (an HMAC-SHA256 is 32 bytes); only the contents must not leak.
      let diff = candidate.length ^ expected.length;
      for (let i = 0; i < expected.length; i++) {
        diff |= (candidate[i] ?? 0) ^ (expected[i] ?? 0);
      }
      matches |= diff === 0 ? 1 : 0;
    }
  }
  return matches !== 0;
}

function encodeBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Standard base64, padding optional; undefined when it is not base64. */
function decodeBase64(value: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 === 1) return undefined;
  try {
    return Uint8Array.from(atob(value), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** `msg_` + a ULID: 10 characters of milliseconds, 16 random ones. */
async function newMessageId(timeMs: number): Promise<string> {
  let time = '';
  for (let t = Math.max(0, Math.floor(timeMs)), i = 0; i < 10; i++, t = Math.floor(t / 32)) {
    time = CROCKFORD.charAt(t % 32) + time;
  }
  // 256 is a multiple of 32, so `byte % 32` is uniform.
  const crypto = await webCrypto();
  if (!crypto) throw new TypeError('Web Crypto is not available here: signing needs Node 18+.');
  const random = Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) =>
    CROCKFORD.charAt(byte % 32),
  );
  return `msg_${time}${random.join('')}`;
}

/**
 * What `verifyWebhook` and `signWebhook` tell a developer when they refuse, word for word, and
 * the edges of what they accept: a refusal's message is what a developer reads to fix their
 * integration, so a changed or lost sentence is a change they notice. Messages are spelled out
 * here, never built from the SDK's own constants.
 */
import { Webhook } from 'standardwebhooks';
import { version } from '../package.json';
import {
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type EventOf,
  type WebhookVerificationErrorReason,
} from './index';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER_SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
const MSG_ID = 'msg_01JD6Y3ZK8R5V2N3M4P5Q6R7S8';
const T0 = new Date('2026-11-22T10:00:00Z');
const T0_SECONDS = T0.getTime() / 1000;
const RAW_BODY_HINT =
  'pass the raw request body exactly as received, not parsed and re-serialised JSON ' +
  "(Express: express.raw({ type: 'application/json' }) and req.body; fetch/edge: await request.text())";

const ping: EventOf<'ping'> = {
  id: 'evt_01JD6Y3ZK8R5V2N3M4P5Q6R7S8',
  position: null,
  cursor: null,
  object: 'event',
  type: 'ping',
  timestamp: '2026-11-22T09:59:58.123Z',
  api_version: 'v1',
  data: { message: 'Hello' },
};

const refunded: EventOf<'payment.refunded'> = {
  id: 'evt_01JD6Y4A2B3C4D5E6F7G8H9J0K',
  position: 42,
  cursor: '42.Xk3aB9_-q1',
  object: 'event',
  type: 'payment.refunded',
  timestamp: '2026-11-22T09:59:59.000Z',
  api_version: 'v1',
  data: {
    id: 'pay_01JD6Y1M2N3P4Q5R6S7T8V9W0X',
    object: 'payment',
    external_id: null,
    student_id: 'stu_01JD6XZ8Y7X6W5V4T3S2R1Q0P9',
    enrollment_id: 'enr_01JD6Y0A1B2C3D4E5F6G7H8J9K',
    amount: 12_000,
    currency: 'EUR',
    status: 'refunded',
    amount_refunded: 12_000,
    description: 'Autumn term fee',
    external_reference: 'ch_3PxYz',
    failure_reason: null,
    succeeded_at: '2026-11-01T08:00:00.000Z',
    failed_at: null,
    refunded_at: '2026-11-22T09:59:59.000Z',
    created_at: '2026-11-01T07:59:00.000Z',
    updated_at: '2026-11-22T09:59:59.000Z',
  },
  previous_attributes: {
    status: 'succeeded',
    amount_refunded: 0,
    refunded_at: null,
    updated_at: '2026-11-01T08:00:00.000Z',
  },
};

/** A delivery as the Platform sends it: compact JSON, signed with the reference library. */
function deliver(event: unknown, secrets: string[] = [SECRET]) {
  const body = JSON.stringify(event);
  const signature = secrets.map((s) => new Webhook(s).sign(MSG_ID, T0, body)).join(' ');
  const headers = {
    'webhook-id': MSG_ID,
    'webhook-timestamp': String(T0_SECONDS),
    'webhook-signature': signature,
  };
  return { body, headers };
}

/** The refusal `promise` ends with: its reason and its whole message. */
async function refusal(
  promise: Promise<unknown>,
): Promise<{ reason: WebhookVerificationErrorReason; message: string }> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  const { reason, message } = error as WebhookVerificationError;
  return { reason, message };
}

describe('toleranceSeconds', () => {
  it('refuses a tolerance that would turn the replay check off, saying what it got', async () => {
    const { body, headers } = deliver(ping);
    // A year-old delivery: any tolerance that let it through would accept replays.
    const now = new Date((T0_SECONDS + 365 * 86_400) * 1000);
    const unset: Record<string, string | undefined> = {};
    for (const [toleranceSeconds, got] of [
      [Number(unset.WEBHOOK_TOLERANCE), 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      ['300', '"300"'],
      [-1, '-1'],
    ] as const) {
      const error: unknown = await verifyWebhook(body, headers, SECRET, {
        now,
        toleranceSeconds: toleranceSeconds as number,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RangeError);
      expect((error as RangeError).message).toBe(
        `toleranceSeconds must be a finite number of seconds >= 0 (default 300), got ${got}: anything else would turn off the replay check`,
      );
    }
  });

  it('takes 0: the timestamp must be this very second', async () => {
    const { body, headers } = deliver(ping);
    await expect(
      verifyWebhook(body, headers, SECRET, { now: T0, toleranceSeconds: 0 }),
    ).resolves.toEqual(ping);
    const oneLater = new Date(T0.getTime() + 1000);
    expect(
      await refusal(verifyWebhook(body, headers, SECRET, { now: oneLater, toleranceSeconds: 0 })),
    ).toEqual({
      reason: 'timestamp_outside_tolerance',
      message:
        'The webhook-timestamp is 1 s in the past, outside the 0 s tolerance: an old message replayed, or one held up on the way. ' +
        "Check that this machine's clock is right (NTP); for a stored message you mean to re-check, pass a matching `now` or a larger `toleranceSeconds`.",
    });
  });

  it('says how far in the future a timestamp is, and that it was not sent yet by our clock', async () => {
    const { body, headers } = deliver(ping);
    const now = new Date((T0_SECONDS - 420) * 1000);
    expect(await refusal(verifyWebhook(body, headers, SECRET, { now }))).toEqual({
      reason: 'timestamp_outside_tolerance',
      message:
        'The webhook-timestamp is 420 s in the future, outside the 300 s tolerance: not sent yet by our clock. ' +
        "Check that this machine's clock is right (NTP); for a stored message you mean to re-check, pass a matching `now` or a larger `toleranceSeconds`.",
    });
  });
});

describe('signatures', () => {
  it('says that none of the signatures matches, with one secret or several', async () => {
    const { body, headers } = deliver(ping, [OTHER_SECRET]);
    const noMatch = (found: string) =>
      `No valid signature: ${found}. Check that the secret is this endpoint's signing secret (each endpoint has its own; while a rotation is under way pass both the new and the old one), and ${RAW_BODY_HINT}.`;
    expect(await refusal(verifyWebhook(body, headers, SECRET, { now: T0 }))).toEqual({
      reason: 'no_valid_signature',
      message: noMatch(
        'none of the 1 v1 signature(s) in webhook-signature matches this body signed with the secret given',
      ),
    });
    const rotated = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    expect(await refusal(verifyWebhook(body, headers, [SECRET, rotated], { now: T0 }))).toEqual({
      reason: 'no_valid_signature',
      message: noMatch(
        'none of the 1 v1 signature(s) in webhook-signature matches this body signed with any of the 2 secrets given',
      ),
    });
    const v2Only = { ...headers, 'webhook-signature': 'v2,abc' };
    expect(await refusal(verifyWebhook(body, v2Only, SECRET, { now: T0 }))).toEqual({
      reason: 'no_valid_signature',
      message: noMatch('webhook-signature holds no v1 signature'),
    });
  });

  it('says a re-serialised body was probably parsed on the way', async () => {
    const { body, headers } = deliver(ping);
    const indented = JSON.stringify(JSON.parse(body), null, 2);
    expect(await refusal(verifyWebhook(indented, headers, SECRET, { now: T0 }))).toEqual({
      reason: 'body_not_raw',
      message:
        'No signature matches this body, and the body is not in the compact form the Platform sends, ' +
        `so it was probably parsed and re-serialised on the way: ${RAW_BODY_HINT}. ` +
        "If it is the untouched body, check that the secret is this endpoint's signing secret.",
    });
  });

  it('says no signature matches a tampered body that is not JSON at all', async () => {
    const headers = await signWebhook('OK', SECRET, { timestamp: T0 });
    expect((await refusal(verifyWebhook('KO', headers, SECRET, { now: T0 }))).reason).toBe(
      'no_valid_signature',
    );
  });

  it('takes a repeated webhook-id or webhook-timestamp header by its first value', async () => {
    const { body, headers } = deliver(ping);
    const repeated = {
      ...headers,
      'webhook-id': [MSG_ID, 'msg_01JD6Y3ZK8R5V2N3M4P5Q6R7S9'],
      'webhook-timestamp': [headers['webhook-timestamp'], '1'],
    };
    await expect(verifyWebhook(body, repeated, SECRET, { now: T0 })).resolves.toEqual(ping);
  });
});

describe('what is not a raw body', () => {
  it.each([
    [null, 'null'],
    [['{"a":1}'], 'an array (parsed JSON?)'],
    [undefined, 'undefined'],
    [42, 'a number'],
    [{ type: 'ping' }, 'an object (parsed JSON?)'],
  ])('refuses %j as the body, naming what it is', async (body, what) => {
    const { headers } = deliver(ping);
    expect(
      await refusal(verifyWebhook(body as unknown as string, headers, SECRET, { now: T0 })),
    ).toEqual({
      reason: 'body_not_raw',
      message: `The webhook body is ${what}, not a string, Uint8Array or ArrayBuffer: ${RAW_BODY_HINT}. The signature covers the exact bytes sent, which a parsed object no longer has.`,
    });
  });

  it('signWebhook refuses to sign what is not bytes', async () => {
    await expect(signWebhook({ type: 'ping' } as unknown as string, SECRET)).rejects.toThrow(
      new TypeError(
        'signWebhook signs bytes: pass the body as a string, Uint8Array or ArrayBuffer (JSON.stringify an event first), not an object (parsed JSON?).',
      ),
    );
  });
});

describe('secrets', () => {
  const returned =
    'Use the secret returned when the endpoint was created or its secret rotated (whsec_ followed by base64).';

  it.each([
    [
      'pat_0123456789abcdef',
      `The webhook secret does not start with "whsec_": it is not a webhook signing secret (an API token, perhaps?). ${returned}`,
    ],
    [
      [SECRET, 42],
      `Webhook secret #2 does not start with "whsec_": it is not a webhook signing secret (an API token, perhaps?). ${returned}`,
    ],
    [
      'whsec_not*base64!',
      `The webhook secret is not "whsec_" followed by base64 (truncated or altered when it was copied?). ${returned}`,
    ],
    // Whitespace pasted around or inside a secret (atob alone would drop it).
    [
      ` ${SECRET}`,
      `The webhook secret does not start with "whsec_": it is not a webhook signing secret (an API token, perhaps?). ${returned}`,
    ],
    [
      `${SECRET}\n`,
      `The webhook secret is not "whsec_" followed by base64 (truncated or altered when it was copied?). ${returned}`,
    ],
    [
      `whsec_\t${SECRET.slice('whsec_'.length)}\n`,
      `The webhook secret is not "whsec_" followed by base64 (truncated or altered when it was copied?). ${returned}`,
    ],
    [
      `whsec_ ${SECRET.slice('whsec_'.length)}`,
      `The webhook secret is not "whsec_" followed by base64 (truncated or altered when it was copied?). ${returned}`,
    ],
    [
      [OTHER_SECRET, 'whsec_abcde'],
      `Webhook secret #2 is not "whsec_" followed by base64 (truncated or altered when it was copied?). ${returned}`,
    ],
    [
      [],
      "No webhook secret given: pass the endpoint's signing secret (whsec_…), or an array of them during a rotation.",
    ],
  ])('refuses the secret %j', async (secret, message) => {
    const { body, headers } = deliver(ping);
    expect(await refusal(verifyWebhook(body, headers, secret as string[], { now: T0 }))).toEqual({
      reason: 'invalid_secret',
      message,
    });
  });
});

describe('headers', () => {
  const missing = (names: string) =>
    `${names}: a Platform delivery always carries webhook-id, webhook-timestamp and webhook-signature. ` +
    'Pass the request headers as received (req.headers or request.headers), and make sure no proxy in between drops them.';

  it('names the missing header, and every one when none came', async () => {
    const { body, headers } = deliver(ping);
    const { 'webhook-timestamp': _dropped, ...rest } = headers;
    expect(await refusal(verifyWebhook(body, rest, SECRET, { now: T0 }))).toEqual({
      reason: 'missing_header',
      message: `Missing webhook header ${missing('webhook-timestamp')}`,
    });
    for (const none of [null, undefined, { 'webhook-id': undefined }]) {
      expect(await refusal(verifyWebhook(body, none as never, SECRET, { now: T0 }))).toEqual({
        reason: 'missing_header',
        message: `Missing webhook headers ${missing('webhook-id, webhook-timestamp, webhook-signature')}`,
      });
    }
  });
});

describe('payloads', () => {
  it('refuses a signed body that is not UTF-8 text', async () => {
    const body = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]);
    const headers = await signWebhook(body, SECRET, { timestamp: T0 });
    const error = await verifyWebhook(body, headers, SECRET, { now: T0 }).catch(
      (e: unknown) => e as WebhookVerificationError,
    );
    expect(error).toMatchObject({
      reason: 'invalid_payload',
      message: 'The webhook body is signed but is not UTF-8 text, so not an event.',
      payload: undefined,
    });
  });

  it('refuses a signed null, which is no event', async () => {
    const { body, headers } = deliver(null);
    expect(await refusal(verifyWebhook(body, headers, SECRET, { now: T0 }))).toEqual({
      reason: 'invalid_payload',
      message: 'The webhook payload is signed but is not an event: it has no string "type".',
    });
  });

  it('lists the first five problems of an invalid event and counts the rest', async () => {
    const { body, headers } = deliver({ type: 'ping', data: {}, object: 'evt', api_version: 1 });
    expect(await refusal(verifyWebhook(body, headers, SECRET, { now: T0 }))).toEqual({
      reason: 'invalid_payload',
      message:
        'The webhook payload is signed but is not a valid "ping" event: ' +
        'id: Required; object: Expected \'event\', received "evt"; timestamp: Required; ' +
        "api_version: Expected 'v1', received 1; data.message: Required. " +
        `If the API is newer than this SDK (@platform/client ${version}), upgrade it; the error's \`payload\` holds the event.`,
    });
    // Six wrong fields of a refund: five are named, one counted.
    const many = deliver({
      ...refunded,
      id: 'evt_1',
      object: 'evnt',
      api_version: 'v0',
      data: { ...refunded.data, id: 'pay_1', amount: '12000', currency: 1 },
    });
    expect(await refusal(verifyWebhook(many.body, many.headers, SECRET, { now: T0 }))).toEqual({
      reason: 'invalid_payload',
      message:
        'The webhook payload is signed but is not a valid "payment.refunded" event: ' +
        'id: must be an id of the form evt_<ULID>; object: Expected \'event\', received "evnt"; ' +
        'api_version: Expected \'v1\', received "v0"; data.id: must be an id of the form pay_<ULID>; ' +
        'data.amount: Expected integer, received string (and 1 more). ' +
        `If the API is newer than this SDK (@platform/client ${version}), upgrade it; the error's \`payload\` holds the event.`,
    });
  });
});

describe('signWebhook', () => {
  it('makes a msg_ id whose first ten characters are the sending time, as a ULID has them', async () => {
    const headers = await signWebhook('{}', SECRET, { timestamp: T0 });
    expect(headers['webhook-id']).toMatch(/^msg_01M81B5H80[0-9A-HJKMNP-TV-Z]{16}$/);
    expect(headers['webhook-timestamp']).toBe(String(T0_SECONDS));
  });
});

describe('without Web Crypto', () => {
  // A browser page served over plain http has `crypto` without `subtle`.
  const real = Object.getOwnPropertyDescriptor(globalThis, 'crypto')!;
  beforeEach(() => {
    Object.defineProperty(globalThis, 'crypto', {
      value: { getRandomValues: (a: Uint8Array) => a },
      configurable: true,
    });
  });
  afterEach(() => Object.defineProperty(globalThis, 'crypto', real));

  it('says what verifying needs', async () => {
    const { body, headers } = deliver(ping);
    await expect(verifyWebhook(body, headers, SECRET, { now: T0 })).rejects.toThrow(
      'Web Crypto (crypto.subtle) is not available: verifying webhooks needs Node 18+, an edge runtime, or a browser page served over https.',
    );
  });
});

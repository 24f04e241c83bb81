/**
 * Webhook verification against the Standard Webhooks reference library (`standardwebhooks`):
 * what it signs we verify and what we sign it verifies, plus every way a delivery can be
 * refused and what the error tells the developer to fix.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';
import {
  PlatformError,
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type Event,
  type EventOf,
  type WebhookVerificationErrorReason,
} from './index';

// The secret of the Standard Webhooks spec's test vector, and a second one as after a rotation.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NEW_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const MSG_ID = 'msg_01JD6Y3ZK8R5V2N3M4P5Q6R7S8';
const T0 = new Date('2026-11-22T10:00:00Z');
const T0_SECONDS = T0.getTime() / 1000;

const ping: EventOf<'ping'> = {
  id: 'evt_01JD6Y3ZK8R5V2N3M4P5Q6R7S8',
  position: null,
  cursor: null,
  object: 'event',
  type: 'ping',
  timestamp: '2026-11-22T09:59:58.123Z',
  api_version: 'v1',
  data: { message: 'Hello from the Platform. Café ☕' },
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
function deliver(event: unknown, secrets: string[] = [SECRET], at = T0) {
  const body = JSON.stringify(event);
  const signature = secrets.map((s) => new Webhook(s).sign(MSG_ID, at, body)).join(' ');
  const headers = {
    'webhook-id': MSG_ID,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
  return { body, headers };
}

async function rejection(promise: Promise<unknown>): Promise<WebhookVerificationError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return error as WebhookVerificationError;
}

async function expectReason(
  promise: Promise<unknown>,
  reason: WebhookVerificationErrorReason,
  ...messageParts: (string | RegExp)[]
): Promise<WebhookVerificationError> {
  const error = await rejection(promise);
  expect(error.reason).toBe(reason);
  for (const part of messageParts) expect(error.message).toMatch(part);
  return error;
}

describe('interoperability with the standardwebhooks reference library', () => {
  it('verifies what the reference library signed, and returns the typed event', async () => {
    const { body, headers } = deliver(refunded);
    await expect(verifyWebhook(body, headers, SECRET, { now: T0 })).resolves.toEqual(refunded);
  });

  it('signs what the reference library verifies', async () => {
    const body = JSON.stringify(ping);
    const headers = await signWebhook(body, SECRET); // the reference library checks against Date.now()
    expect(new Webhook(SECRET).verify(body, headers)).toEqual(ping);
  });

  it('produces the signature of the Standard Webhooks test vector', async () => {
    const headers = await signWebhook('{"test": 2432232314}', SECRET, {
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestamp: new Date(1614265330 * 1000),
    });
    expect(headers).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it('signs bytes, not text: a non-ASCII body signed as a Buffer verifies both ways', async () => {
    const body = JSON.stringify(ping);
    const ours = await signWebhook(new TextEncoder().encode(body), SECRET, { timestamp: T0 });
    expect(ours['webhook-signature']).toBe(new Webhook(SECRET).sign(ours['webhook-id'], T0, body));
  });

  it('generates a msg_ id and uses the current time by default', async () => {
    const before = Math.floor(Date.now() / 1000);
    const headers = await signWebhook('{}', SECRET);
    expect(headers['webhook-id']).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(Number(headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before);
    expect((await signWebhook('{}', SECRET))['webhook-id']).not.toBe(headers['webhook-id']);
  });
});

describe('secret rotation (two live secrets)', () => {
  it('signs with both secrets into one header the reference library accepts with either', async () => {
    const body = JSON.stringify(ping);
    const headers = await signWebhook(body, [NEW_SECRET, SECRET]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(SECRET).verify(body, headers)).toEqual(ping);
    expect(new Webhook(NEW_SECRET).verify(body, headers)).toEqual(ping);
  });

  it('accepts a two-signature header with either secret alone', async () => {
    const { body, headers } = deliver(ping, [SECRET, NEW_SECRET]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    await expect(verifyWebhook(body, headers, SECRET, { now: T0 })).resolves.toEqual(ping);
    await expect(verifyWebhook(body, headers, NEW_SECRET, { now: T0 })).resolves.toEqual(ping);
  });

  it('accepts a signature by either secret when given both', async () => {
    for (const signer of [SECRET, NEW_SECRET]) {
      const { body, headers } = deliver(ping, [signer]);
      await expect(
        verifyWebhook(body, headers, [NEW_SECRET, SECRET], { now: T0 }),
      ).resolves.toEqual(ping);
    }
  });

  it('refuses when neither secret signed it', async () => {
    const { body, headers } = deliver(ping, [`whsec_${randomBytes(24).toString('base64')}`]);
    await expectReason(
      verifyWebhook(body, headers, [SECRET, NEW_SECRET], { now: T0 }),
      'no_valid_signature',
      'any of the 2 secrets',
    );
  });
});

describe('refusals', () => {
  it('refuses a tampered body', async () => {
    const { body, headers } = deliver(refunded);
    const tampered = body.replace('"amount_refunded":12000', '"amount_refunded":1');
    expect(tampered).not.toBe(body);
    const error = await expectReason(
      verifyWebhook(tampered, headers, SECRET, { now: T0 }),
      'no_valid_signature',
      /none of the 1 v1 signature\(s\) in webhook-signature matches/,
      "this endpoint's signing secret",
    );
    expect(error).toBeInstanceOf(PlatformError);
    expect(error.name).toBe('WebhookVerificationError');
    expect(error.payload).toBeUndefined();
  });

  it('refuses a wrong secret', async () => {
    const { body, headers } = deliver(ping);
    await expectReason(
      verifyWebhook(body, headers, NEW_SECRET, { now: T0 }),
      'no_valid_signature',
      'signed with the secret given',
    );
  });

  it('refuses a signature one byte off, or of another length', async () => {
    const { body, headers } = deliver(ping);
    const bytes = Buffer.from(headers['webhook-signature'].slice(3), 'base64');
    bytes[31] = (bytes[31] ?? 0) ^ 1;
    for (const forged of [bytes, bytes.subarray(0, 16), Buffer.concat([bytes, bytes])]) {
      const signature = `v1,${forged.toString('base64')}`;
      await expectReason(
        verifyWebhook(body, { ...headers, 'webhook-signature': signature }, SECRET, { now: T0 }),
        'no_valid_signature',
      );
    }
  });

  it('ignores signatures of other versions and malformed entries', async () => {
    const { body, headers } = deliver(ping);
    const valid = headers['webhook-signature'];
    const v2 = valid.replace('v1,', 'v2,');
    await expectReason(
      verifyWebhook(body, { ...headers, 'webhook-signature': `${v2} v1 v1,@@@` }, SECRET, {
        now: T0,
      }),
      'no_valid_signature',
      'webhook-signature holds no v1 signature',
    );
    const mixed = `v1a,xyz ${v2}   ${valid} v1,AAAA`;
    await expect(
      verifyWebhook(body, { ...headers, 'webhook-signature': mixed }, SECRET, { now: T0 }),
    ).resolves.toEqual(ping);
  });

  it('refuses an old timestamp, saying by how much and to check the clock', async () => {
    const { body, headers } = deliver(ping);
    const now = new Date((T0_SECONDS + 301) * 1000);
    await expectReason(
      verifyWebhook(body, headers, SECRET, { now }),
      'timestamp_outside_tolerance',
      '301 s in the past',
      'outside the 300 s tolerance',
      /clock/,
    );
  });

  it('refuses a timestamp in the future', async () => {
    const { body, headers } = deliver(ping);
    const now = new Date((T0_SECONDS - 420) * 1000);
    await expectReason(
      verifyWebhook(body, headers, SECRET, { now }),
      'timestamp_outside_tolerance',
      '420 s in the future',
      /clock/,
    );
  });

  it('accepts up to the tolerance either way, which toleranceSeconds widens', async () => {
    const { body, headers } = deliver(ping);
    for (const offset of [300, -300]) {
      const now = new Date((T0_SECONDS + offset) * 1000 + 999);
      await expect(verifyWebhook(body, headers, SECRET, { now })).resolves.toEqual(ping);
    }
    const later = new Date((T0_SECONDS + 3600) * 1000);
    await expect(
      verifyWebhook(body, headers, SECRET, { now: later, toleranceSeconds: 3600 }),
    ).resolves.toEqual(ping);
    await expect(
      verifyWebhook(body, headers, SECRET, { now: later, toleranceSeconds: -1 }),
    ).rejects.toThrow(RangeError);
    await expect(
      verifyWebhook(body, headers, SECRET, { now: new Date('not a date') }),
    ).rejects.toThrow('now must be a valid Date');
  });

  it('refuses a timestamp that is not Unix seconds', async () => {
    const { body, headers } = deliver(ping);
    for (const value of ['2026-11-22T10:00:00Z', '1.7e9', '-5']) {
      await expectReason(
        verifyWebhook(body, { ...headers, 'webhook-timestamp': value }, SECRET, { now: T0 }),
        'invalid_timestamp',
        JSON.stringify(value),
      );
    }
  });

  it('names each missing header', async () => {
    const { body, headers } = deliver(ping);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const { [name]: _dropped, ...rest } = headers;
      const error = await expectReason(
        verifyWebhook(body, rest, SECRET, { now: T0 }),
        'missing_header',
        `Missing webhook header ${name}:`,
      );
      expect(error.message).toMatch(/proxy/);
    }
    await expectReason(
      verifyWebhook(body, { 'webhook-id': MSG_ID, 'webhook-signature': '  ' }, SECRET),
      'missing_header',
      'headers webhook-timestamp, webhook-signature:',
    );
    await expectReason(
      verifyWebhook(body, new Headers(), SECRET),
      'missing_header',
      'webhook-id, webhook-timestamp, webhook-signature',
    );
  });

  it('explains a body that was parsed and re-serialised', async () => {
    const { body, headers } = deliver(refunded);
    for (const reserialised of [
      JSON.stringify(JSON.parse(body), null, 2),
      `${body}\n`,
      String(JSON.parse(body)),
    ]) {
      await expectReason(
        verifyWebhook(reserialised, headers, SECRET, { now: T0 }),
        'body_not_raw',
        'pass the raw request body exactly as received, not parsed and re-serialised JSON',
      );
    }
  });

  it('explains a parsed object passed as the body', async () => {
    const { body, headers } = deliver(ping);
    const parsed: unknown = JSON.parse(body);
    const error = await expectReason(
      verifyWebhook(parsed as string, headers, SECRET, { now: T0 }),
      'body_not_raw',
      'The webhook body is an object (parsed JSON?)',
      'pass the raw request body exactly as received, not parsed and re-serialised JSON',
      'express.raw',
    );
    expect(error.payload).toBeUndefined();
    await expectReason(
      verifyWebhook(undefined as unknown as string, headers, SECRET),
      'body_not_raw',
      'The webhook body is undefined',
    );
  });

  it('refuses what is not a webhook secret, without echoing it', async () => {
    const { body, headers } = deliver(ping);
    const cases: [string | string[], string][] = [
      ['pat_0123456789abcdef', 'does not start with "whsec_"'],
      ['whsec_not*base64!', 'is not "whsec_" followed by base64'],
      ['whsec_', 'is not "whsec_" followed by base64'],
      [[SECRET, 'sk_live_123'], 'Webhook secret #2 does not start'],
      [[], 'No webhook secret given'],
    ];
    for (const [secret, message] of cases) {
      const error = await expectReason(
        verifyWebhook(body, headers, secret, { now: T0 }),
        'invalid_secret',
        message,
      );
      expect(error.message).not.toContain('0123456789abcdef');
      expect(error.message).not.toContain('sk_live');
    }
    await expect(signWebhook(body, 'not-a-secret')).rejects.toThrow(WebhookVerificationError);
  });

  it('names an event type this SDK does not know, and says the SDK may be older than the API', async () => {
    const future = { ...ping, type: 'invoice.paid', data: { id: 'inv_1' } };
    const { body, headers } = deliver(future);
    const error = await expectReason(
      verifyWebhook(body, headers, SECRET, { now: T0 }),
      'unknown_event_type',
      'Unknown event type "invoice.paid"',
      /older than the API/,
      /Upgrade @platform\/client/,
    );
    expect(error.payload).toEqual(future);

    // Names on Object.prototype are not in the catalogue either.
    const sneaky = deliver({ ...ping, type: 'constructor' });
    await expectReason(
      verifyWebhook(sneaky.body, sneaky.headers, SECRET, { now: T0 }),
      'unknown_event_type',
      '"constructor"',
    );
  });

  it('says what is wrong with a signed payload that is not a valid event', async () => {
    const cases: [unknown, string[]][] = [
      [{ ...ping, data: {} }, ['not a valid "ping" event', 'data.message: Required']],
      [{ ...ping, id: 'evt_123' }, ['id: must be an id of the form evt_<ULID>']],
      [
        { ...refunded, data: { ...refunded.data, amount: '12000', status: 7 } },
        ['"payment.refunded"', 'data.amount: Expected integer, received string', 'data.status'],
      ],
      [{ ...ping, type: 42 }, ['has no string "type"']],
      [['ping'], ['has no string "type"']],
    ];
    for (const [payload, messages] of cases) {
      const { body, headers } = deliver(payload);
      const error = await expectReason(
        verifyWebhook(body, headers, SECRET, { now: T0 }),
        'invalid_payload',
        ...messages,
      );
      expect(error.payload).toEqual(payload);
    }
  });

  it('refuses a signed body that is not JSON', async () => {
    const headers = await signWebhook('OK', SECRET, { timestamp: T0 });
    await expectReason(
      verifyWebhook('OK', headers, SECRET, { now: T0 }),
      'invalid_payload',
      'is signed but is not JSON',
    );
  });
});

describe('inputs', () => {
  it('reads a Headers instance and a plain object with names in any case', async () => {
    const { body, headers } = deliver(ping, [SECRET, NEW_SECRET]);
    const [first, second] = headers['webhook-signature'].split(' ');
    const mixedCase: IncomingHttpHeaders = {
      'Webhook-Id': headers['webhook-id'],
      'WEBHOOK-TIMESTAMP': headers['webhook-timestamp'],
      'webhook-Signature': [first!, second!], // a repeated header, as Node gives it
      'content-type': 'application/json',
    };
    await expect(verifyWebhook(body, mixedCase, NEW_SECRET, { now: T0 })).resolves.toEqual(ping);

    const fetchHeaders = new Headers({
      'Content-Type': 'application/json',
      'Webhook-ID': headers['webhook-id'],
      'Webhook-Timestamp': headers['webhook-timestamp'],
    });
    fetchHeaders.append('Webhook-Signature', first!);
    fetchHeaders.append('Webhook-Signature', second!); // get() joins them with ", "
    await expect(verifyWebhook(body, fetchHeaders, SECRET, { now: T0 })).resolves.toEqual(ping);
    await expect(verifyWebhook(body, fetchHeaders, NEW_SECRET, { now: T0 })).resolves.toEqual(ping);
  });

  it('verifies a body given as Uint8Array, Buffer or ArrayBuffer', async () => {
    const { body, headers } = deliver(refunded);
    const bytes = new TextEncoder().encode(body);
    // A view into a larger buffer, as a pooled Buffer is.
    const padded = new Uint8Array(bytes.length + 8);
    padded.set(bytes, 4);
    for (const raw of [
      bytes,
      Buffer.from(body),
      padded.subarray(4, 4 + bytes.length),
      bytes.buffer.slice(0),
    ]) {
      await expect(verifyWebhook(raw, headers, SECRET, { now: T0 })).resolves.toEqual(refunded);
    }
  });

  it('keeps fields a newer API added to a known event', async () => {
    const extended = { ...ping, data: { ...ping.data, region: 'eu' }, livemode: true };
    const { body, headers } = deliver(extended);
    await expect(verifyWebhook(body, headers, SECRET, { now: T0 })).resolves.toEqual(extended);
  });

  it('runs on Web Crypto alone', () => {
    expect(typeof globalThis.crypto.subtle.sign).toBe('function');
  });
});

describe('types', () => {
  it('narrows the returned event on type', async () => {
    const { body, headers } = deliver(refunded);
    const event: Event = await verifyWebhook(body, headers, SECRET, { now: T0 });
    expect(describeEvent(event)).toBe('refunded 12000 of pay_01JD6Y1M2N3P4Q5R6S7T8V9W0X');
    expect(describeEvent(ping)).toBe('ping: Hello from the Platform. Café ☕');
  });
});

/** Compiles only if `event.type` narrows `event.data` (checked by `tsc`, run by typecheck). */
function describeEvent(event: Event): string {
  if (event.type === 'payment.refunded') {
    const refundedAmount: number = event.data.amount_refunded;
    // @ts-expect-error a payment has no `message`
    void event.data.message;
    return `refunded ${refundedAmount} of ${event.data.id}`;
  }
  if (event.type === 'ping') {
    const message: string = event.data.message;
    // @ts-expect-error a ping has no `amount`
    void event.data.amount;
    return `ping: ${message}`;
  }
  // @ts-expect-error 'invoice.paid' is not in the catalogue
  const impossible: Event['type'] = 'invoice.paid';
  return `${event.type} ${impossible}`;
}

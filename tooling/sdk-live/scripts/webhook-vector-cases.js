'use strict';
/**
 * The fixed inputs of the webhook verification vectors (secrets, ids, times, students) and the
 * cases themselves, grouped by what they check; write-webhook-vectors.js signs and writes them.
 */
const crypto = require('node:crypto');

const TOLERANCE = 300;

/** The Standard Webhooks spec's own example (standard-webhooks libraries' tests). */
const SPEC = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

/** A fixed 32-byte signing secret per label, in the form the server issues (whsec_ + base64). */
function secret(label) {
  const key = crypto.createHash('sha256').update(`platform webhook vectors: ${label}`).digest();
  return `whsec_${key.toString('base64')}`;
}

const SECRET = secret('endpoint');
const OLD_SECRET = secret('rotation: old');
const NEW_SECRET = secret('rotation: new');
const OTHER_SECRET = secret('another endpoint');

/** 2026-01-01T00:00:00Z: when the vectors' messages are sent. */
const SENT = 1767225600;
const MESSAGE_ID = 'msg_01KDXC5V9Q3M8R2T6W4Y7Z0A1B';

const STUDENT = {
  id: 'stu_01KDXC5T2N8P4Q6R9S3V5W7X0Y',
  object: 'student',
  student_number: 'S-2026-0042',
  first_name: 'Ana',
  last_name: 'Souza',
  preferred_name: null,
  email: 'ana.souza@school.test',
  date_of_birth: '2012-03-14',
  status: 'active',
  grade_level: 7,
  created_at: '2025-12-31T23:59:59.000Z',
  updated_at: '2025-12-31T23:59:59.000Z',
};

/** Names with 2-, 3- and 4-byte UTF-8 characters, a quote and a backslash. */
const NON_ASCII_STUDENT = {
  ...STUDENT,
  id: 'stu_01KDXC5T2N8P4Q6R9S3V5W7X1Z',
  first_name: 'Zoë',
  last_name: 'Łukasiewicz-Ñandú',
  preferred_name: '学生 "Zo" \\ 🎓',
};

/** Python's json.dumps defaults: ", " and ": " separators, every non-ASCII character escaped. */
function pythonJsonDumps(value) {
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).map(
      ([key, member]) => `${asciiJson(key)}: ${pythonJsonDumps(member)}`,
    );
    return `{${members.join(', ')}}`;
  }
  return asciiJson(value);
}

/** PHP's json_encode defaults: compact, non-ASCII escaped as \uXXXX, "/" escaped as "\/". */
function phpJsonEncode(value) {
  return asciiEscape(JSON.stringify(value)).replaceAll('/', '\\/');
}

function asciiJson(value) {
  return asciiEscape(JSON.stringify(value));
}

/** \uXXXX (lowercase, UTF-16 surrogate pairs) for every character outside ASCII, as both do. */
function asciiEscape(json) {
  return json.replace(
    /[\u0080-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function b64(text) {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** Headers as the server sends them (lower case), signed by the server's Signer. */
function signedHeaders(signer, secrets, id, timestamp, body) {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signer.sign(secrets, id, new Date(timestamp * 1000), body),
  };
}

/**
 * The case list and its builders: `add` appends a case, `base` is a valid delivery with overrides,
 * `withHeaders`, `without` and `failing` derive the usual variations from it.
 */
function caseKit(signer, event) {
  const cases = [];
  const add = (name, description, fields) => {
    cases.push({
      name,
      description,
      secrets: fields.secrets,
      headers: fields.headers,
      body_b64: b64(fields.body),
      now: fields.now,
      tolerance: TOLERANCE,
      expect: fields.expect,
      ...(fields.event_type && { event_type: fields.event_type }),
      ...(fields.expect_typescript && { expect_typescript: fields.expect_typescript }),
    });
  };
  const base = (overrides = {}) => ({
    secrets: [SECRET],
    headers: signedHeaders(signer, [SECRET], MESSAGE_ID, SENT, event),
    body: event,
    now: SENT,
    expect: 'ok',
    event_type: 'student.created',
    ...overrides,
  });
  const valid = base().headers;
  const withHeaders = (headers, overrides = {}) =>
    base({ headers: { ...valid, ...headers }, ...overrides });
  const without = (name) => {
    const headers = { ...valid };
    delete headers[name];
    return base({ headers, expect: 'missing_header', event_type: undefined });
  };
  const failing = (overrides) =>
    base({ expect: 'no_valid_signature', event_type: undefined, ...overrides });
  return { cases, add, base, valid, withHeaders, without, failing };
}

/** Valid deliveries: the spec example, a server event, a newer server's event, raw non-ASCII bytes. */
function validCases({ add, base, signer, nonAscii, webhookPayload }) {
  add(
    'spec/standard-webhooks-example',
    'The Standard Webhooks spec example, signed by the server.',
    {
      secrets: [SPEC.secret],
      headers: signedHeaders(signer, [SPEC.secret], SPEC.id, SPEC.timestamp, SPEC.body),
      body: SPEC.body,
      now: SPEC.timestamp,
      expect: 'ok',
    },
  );
  add(
    'event/student-created',
    'A student.created delivery exactly as the server sends it.',
    base(),
  );
  // A newer server: an enum value, a field this SDK version does not know, a nullable field
  // left out. Additive changes within v1, so every verifier must still accept the event.
  const newer = { ...STUDENT, status: 'suspended', nickname: 'Ani' };
  delete newer.email;
  const newerBody = webhookPayload({
    eventId: 'evt_01KDXC5V9P7K2M4N6Q8R0S2T4X',
    eventType: 'student.created',
    eventCreatedAt: new Date(SENT * 1000 - 1000),
    eventData: JSON.stringify(newer),
    eventPosition: 42,
  });
  add(
    'event/newer-server-fields',
    'A student.created event from a newer server: data.status "suspended" (a new enum value), a new field, and the nullable email left out. New enum values and fields are not breaking: verified and returned.',
    base({
      body: newerBody,
      headers: signedHeaders(signer, [SECRET], MESSAGE_ID, SENT, newerBody),
    }),
  );
  add(
    'body/non-ascii-utf8-crlf',
    'A student.created event with 2-, 3- and 4-byte UTF-8 characters, pretty-printed with CRLF line ends: the bytes are signed as they are.',
    base({ body: nonAscii, headers: signedHeaders(signer, [SECRET], MESSAGE_ID, SENT, nonAscii) }),
  );
}

/** Signature lists: v1a entries, other secrets, malformed and truncated signatures. */
function signatureCases({ add, valid, withHeaders, failing, signer, event }) {
  const v1a = `v1a,${crypto.createHash('sha512').update('an asymmetric signature').digest('base64')}`;
  add(
    'signature/v1a-before-v1',
    'A v1a (asymmetric) signature comes first: it is skipped, and the v1 after it verifies.',
    withHeaders({ 'webhook-signature': `${v1a} ${valid['webhook-signature']}` }),
  );
  add(
    'signature/v1a-only',
    'Only a v1a signature: no v1 to check.',
    failing({ headers: { ...valid, 'webhook-signature': v1a } }),
  );
  add(
    'signature/another-secret-then-valid',
    'A signature by another secret, then the right one: any matching v1 is enough.',
    withHeaders({
      'webhook-signature': `${signedHeaders(signer, [OTHER_SECRET], MESSAGE_ID, SENT, event)['webhook-signature']} ${valid['webhook-signature']}`,
    }),
  );
  add(
    'signature/v1-without-comma',
    'webhook-signature is "v1" alone: malformed, so no valid signature (never a crash).',
    failing({ headers: { ...valid, 'webhook-signature': 'v1' } }),
  );
  add(
    'signature/v1-glued-to-signature',
    'The comma between version and signature is missing.',
    failing({
      headers: { ...valid, 'webhook-signature': valid['webhook-signature'].replace(',', '') },
    }),
  );
  add(
    'signature/v1-empty',
    '"v1," with nothing after the comma.',
    failing({ headers: { ...valid, 'webhook-signature': 'v1,' } }),
  );
  add(
    'signature/not-base64',
    'The signature is not base64 at all.',
    failing({ headers: { ...valid, 'webhook-signature': 'v1,not*base64!$' } }),
  );
  add(
    'signature/base64url-alphabet',
    'The spec signature written in the URL-safe alphabet (- and _): base64 is strict here, so it does not match.',
    {
      secrets: [SPEC.secret],
      headers: {
        ...signedHeaders(signer, [SPEC.secret], SPEC.id, SPEC.timestamp, SPEC.body),
        'webhook-signature': SPEC.signature.replaceAll('+', '-').replaceAll('/', '_'),
      },
      body: SPEC.body,
      now: SPEC.timestamp,
      expect: 'no_valid_signature',
    },
  );
  add(
    'signature/truncated',
    'The valid signature with its last 8 base64 characters cut off: valid base64, wrong length.',
    failing({
      headers: { ...valid, 'webhook-signature': valid['webhook-signature'].slice(0, -8) },
    }),
  );
}

/** Secret rotation: the server signs with the new and the old secret during a rotation. */
function rotationCases({ add, base, failing, signer, event }) {
  const rotated = signedHeaders(signer, [OLD_SECRET, NEW_SECRET], MESSAGE_ID, SENT, event);
  add(
    'rotation/verify-with-new',
    'Signed with the old and the new secret; verified with the new one.',
    base({ headers: rotated, secrets: [NEW_SECRET] }),
  );
  add(
    'rotation/verify-with-old',
    'Signed with the old and the new secret; verified with the old one.',
    base({ headers: rotated, secrets: [OLD_SECRET] }),
  );
  add(
    'rotation/verify-with-both',
    'Signed with the old and the new secret; verified with both.',
    base({ headers: rotated, secrets: [NEW_SECRET, OLD_SECRET] }),
  );
  add(
    'rotation/new-only-verified-with-both',
    'Signed with the new secret only (the rotation is over); the receiver still passes both.',
    base({
      headers: signedHeaders(signer, [NEW_SECRET], MESSAGE_ID, SENT, event),
      secrets: [OLD_SECRET, NEW_SECRET],
    }),
  );
  add(
    'rotation/old-only-verified-with-new',
    'Signed with the old secret only; the receiver has only the new one.',
    failing({
      headers: signedHeaders(signer, [OLD_SECRET], MESSAGE_ID, SENT, event),
      secrets: [NEW_SECRET],
    }),
  );
}

/** Secrets: wrong, unpadded, without prefix, not base64, none. */
function secretCases({ add, base, failing }) {
  add('secret/wrong', "Another endpoint's secret.", failing({ secrets: [OTHER_SECRET] }));
  add(
    'secret/unpadded',
    "The secret without its base64 '=' padding.",
    base({ secrets: [SECRET.replace(/=+$/, '')] }),
  );
  add(
    'secret/without-whsec-prefix',
    'The base64 key without "whsec_": refused as not a signing secret (an API token pasted by mistake looks like this), not guessed at.',
    base({
      secrets: [SECRET.slice('whsec_'.length)],
      expect: 'invalid_secret',
      event_type: undefined,
    }),
  );
  add(
    'secret/not-base64',
    '"whsec_" followed by something that is not base64.',
    base({ secrets: ['whsec_not*base64!'], expect: 'invalid_secret', event_type: undefined }),
  );
  add(
    'secret/none',
    'An empty list of secrets.',
    base({ secrets: [], expect: 'invalid_secret', event_type: undefined }),
  );
}

/** The body must be the raw bytes: any change or re-encoding fails, as does a changed id. */
function bodyCases({ add, valid, failing, signer, event, nonAscii }) {
  add(
    'body/tampered',
    'One value of the signed body changed (grade_level 7 → 8).',
    failing({ body: event.replace('"grade_level":7', '"grade_level":8') }),
  );
  add(
    'body/trailing-newline',
    'A newline added after the signed body.',
    failing({ body: `${event}\n` }),
  );
  add(
    'body/reserialized-compact',
    'The CRLF body parsed and re-serialised compactly (JSON.stringify): same JSON, other bytes.',
    failing({
      body: JSON.stringify(JSON.parse(nonAscii)),
      headers: signedHeaders(signer, [SECRET], MESSAGE_ID, SENT, nonAscii),
    }),
  );
  add(
    'body/reserialized-python-json-dumps',
    "The CRLF body parsed and re-serialised with Python's json.dumps defaults (spaces, \\u escapes).",
    failing({
      body: pythonJsonDumps(JSON.parse(nonAscii)),
      headers: signedHeaders(signer, [SECRET], MESSAGE_ID, SENT, nonAscii),
    }),
  );
  add(
    'body/reserialized-php-json-encode',
    "The CRLF body parsed and re-serialised with PHP's json_encode defaults (\\u escapes, \\/).",
    failing({
      body: phpJsonEncode(JSON.parse(nonAscii)),
      headers: signedHeaders(signer, [SECRET], MESSAGE_ID, SENT, nonAscii),
    }),
  );
  add(
    'id/tampered',
    'webhook-id changed after signing.',
    failing({ headers: { ...valid, 'webhook-id': 'msg_01KDXC5V9Q3M8R2T6W4Y7Z0A1C' } }),
  );
}

/** Timestamps: ±300 s around the receiver's clock, and malformed values. */
function timestampCases({ add, base, valid, failing }) {
  add(
    'timestamp/tampered',
    'webhook-timestamp moved by one second after signing (still within tolerance).',
    failing({ headers: { ...valid, 'webhook-timestamp': String(SENT + 1) }, now: SENT + 1 }),
  );
  for (const [label, offset, expect] of [
    ['299-s-old', 299, 'ok'],
    ['300-s-old', 300, 'ok'],
    ['301-s-old', 301, 'timestamp_outside_tolerance'],
    ['299-s-ahead', -299, 'ok'],
    ['300-s-ahead', -300, 'ok'],
    ['301-s-ahead', -301, 'timestamp_outside_tolerance'],
  ]) {
    const description =
      offset > 0
        ? `Received ${offset} s after it was sent.`
        : `Received ${-offset} s before it was sent (the sender's clock is ahead).`;
    add(
      `timestamp/${label}`,
      description,
      base({ now: SENT + offset, expect, ...(expect !== 'ok' && { event_type: undefined }) }),
    );
  }
  for (const [label, value, expect, description] of [
    ['not-a-number', 'yesterday', 'invalid_timestamp', 'webhook-timestamp is not a number.'],
    [
      'decimal',
      `${SENT}.5`,
      'invalid_timestamp',
      'webhook-timestamp has a fraction: whole seconds only.',
    ],
    ['negative', `-${SENT}`, 'invalid_timestamp', 'webhook-timestamp is negative.'],
    [
      'milliseconds',
      `${SENT}000`,
      'timestamp_outside_tolerance',
      'webhook-timestamp in milliseconds: a number, but far in the future.',
    ],
  ]) {
    add(
      `timestamp/${label}`,
      description,
      base({ headers: { ...valid, 'webhook-timestamp': value }, expect, event_type: undefined }),
    );
  }
}

/** Headers: missing, empty, in other cases, and as $_SERVER names them. */
function headerCases({ add, base, valid, without }) {
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    add(`headers/missing-${name}`, `No ${name} header.`, without(name));
  }
  add(
    'headers/empty-webhook-signature',
    'webhook-signature is present but empty.',
    base({
      headers: { ...valid, 'webhook-signature': '' },
      expect: 'missing_header',
      event_type: undefined,
    }),
  );
  add(
    'headers/mixed-case-names',
    'Header names in other cases (HTTP header names are case-insensitive; getallheaders() gives Webhook-Id).',
    base({
      headers: {
        'Webhook-Id': valid['webhook-id'],
        'WEBHOOK-TIMESTAMP': valid['webhook-timestamp'],
        'webhook-Signature': valid['webhook-signature'],
      },
    }),
  );
  add(
    'headers/server-variable-names',
    "The headers as PHP's $_SERVER (and a WSGI environ) name them: HTTP_WEBHOOK_ID and so on. The PHP and Python verifiers accept them; the TypeScript verifier takes HTTP header maps only and reports missing_header (expect_typescript).",
    base({
      headers: {
        HTTP_WEBHOOK_ID: valid['webhook-id'],
        HTTP_WEBHOOK_TIMESTAMP: valid['webhook-timestamp'],
        HTTP_WEBHOOK_SIGNATURE: valid['webhook-signature'],
      },
      expect_typescript: 'missing_header',
    }),
  );
}

/** Every case group, in the order the vectors list them. */
function addCases(kit) {
  validCases(kit);
  signatureCases(kit);
  rotationCases(kit);
  secretCases(kit);
  bodyCases(kit);
  timestampCases(kit);
  headerCases(kit);
}

module.exports = { NON_ASCII_STUDENT, SENT, SPEC, STUDENT, addCases, caseKit };

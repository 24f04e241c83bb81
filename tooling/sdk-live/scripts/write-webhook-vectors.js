#!/usr/bin/env node
'use strict';
/**
 * Writes conformance/webhooks/vectors.json: the webhook verification cases every SDK's tests
 * (TypeScript, PHP, Python) run through their verifier, all signed by the server's own Signer
 * (the standardwebhooks reference library) and with bodies built by its delivery code, so a
 * verifier that passes them accepts what the server really sends.
 *
 *   node scripts/write-webhook-vectors.js           write the file
 *   node scripts/write-webhook-vectors.js --check   fail if the file differs from what it would write
 *
 * Everything is fixed (secrets, ids, times): the output is the same on every run. Build the
 * server first (`pnpm build`).
 */
const fs = require('node:fs');
const path = require('node:path');

const {
  NON_ASCII_STUDENT,
  SENT,
  SPEC,
  STUDENT,
  addCases,
  caseKit,
} = require('./webhook-vector-cases');

const OUTPUT = path.resolve(__dirname, '../../../conformance/webhooks/vectors.json');

function buildVectors() {
  const { Signer, webhookPayload } = require('@platform/server/testing');
  const { EventSchema } = require('@platform/contract');
  const signer = new Signer();

  // The spec's example must come out of the server's signer unchanged, or nothing here holds.
  const specSignature = signer.sign(
    [SPEC.secret],
    SPEC.id,
    new Date(SPEC.timestamp * 1000),
    SPEC.body,
  );
  if (specSignature !== SPEC.signature) {
    throw new Error(
      `the server's signer gives ${specSignature} for the spec vector, not ${SPEC.signature}`,
    );
  }

  /** A delivery body exactly as the server builds it, checked against the contract's schema. */
  const eventBody = (eventId, type, data, eventPosition = 41) => {
    const body = webhookPayload({
      eventId,
      eventType: type,
      eventCreatedAt: new Date(SENT * 1000 - 1000),
      eventData: JSON.stringify(data),
      eventPosition,
    });
    // The fixtures were cut before students had `external_id` (decision 29); the server delivers
    // such an event's data with it as null (apps/server/src/events/event-data.ts), and so do these.
    const parsed = EventSchema.safeParse(JSON.parse(body));
    if (!parsed.success) throw new Error(`not a valid ${type} event: ${parsed.error.message}`);
    return body;
  };
  const event = eventBody('evt_01KDXC5V9P7K2M4N6Q8R0S2T4V', 'student.created', STUDENT);
  // The same kind of event pretty-printed with CRLF line ends: bytes a verifier must not touch.
  const nonAsciiObject = JSON.parse(
    eventBody('evt_01KDXC5V9P7K2M4N6Q8R0S2T4W', 'student.created', NON_ASCII_STUDENT),
  );
  const nonAscii = `${JSON.stringify(nonAsciiObject, null, 2).replace(/\n/g, '\r\n')}\r\n`;
  if (!/\r\n/.test(nonAscii) || Buffer.byteLength(nonAscii) === nonAscii.length) {
    throw new Error('the non-ASCII body must hold CRLF and multi-byte characters');
  }

  const kit = caseKit(signer, event);
  addCases({ ...kit, signer, event, nonAscii, webhookPayload });
  const { cases } = kit;

  const names = cases.map((c) => c.name);
  if (new Set(names).size !== names.length) throw new Error('two cases share a name');

  return { ...documentation(), cases };
}

/** What the vectors file says about itself: its purpose, each field of a case, each outcome. */
function documentation() {
  return {
    description:
      "Shared Standard Webhooks verification vectors: every Platform SDK (TypeScript, PHP, Python) runs each case through its verifier and must reach `expect`. Signed by the server's own Signer (the standardwebhooks library) with bodies from its delivery code. Do not edit: regenerate with `node tooling/sdk-live/scripts/write-webhook-vectors.js`.",
    format: {
      name: 'unique id of the case',
      description: 'what the case checks',
      secrets:
        'the endpoint secrets to verify with, in order (a rotation passes two); whsec_ + base64 of the key',
      headers: 'the request headers, names exactly as given (match them case-insensitively)',
      body_b64: 'the raw request body, base64 (the exact bytes: verify these, never a re-encoding)',
      now: "the receiver's clock, Unix seconds (inject it; never use the real clock)",
      tolerance: 'how far webhook-timestamp may be from now, either way, in seconds',
      expect: 'the outcome: "ok" or the reason the verifier must report',
      event_type:
        'present when the body is a valid event of this type: on ok, the verifier must return it typed',
      expect_typescript:
        'where the TypeScript verifier differs by design, its outcome (see the case)',
    },
    expectations: {
      ok: 'the signature verifies. Without event_type the body is not a Platform event: a verifier that also parses events may then report invalid_payload (TypeScript: or unknown_event_type), and only that.',
      missing_header: 'webhook-id, webhook-timestamp or webhook-signature is absent or empty',
      invalid_timestamp: 'webhook-timestamp is not whole Unix seconds (digits only)',
      timestamp_outside_tolerance:
        'webhook-timestamp is more than `tolerance` seconds from `now`, either way',
      no_valid_signature:
        'no v1 signature in webhook-signature matches (malformed entries are skipped, never a crash). The TypeScript verifier reports body_not_raw instead when the body does not look like what the server sends; that counts as no_valid_signature.',
      invalid_secret:
        'a secret is not "whsec_" + base64, or none is given: checked before anything else',
    },
  };
}

function render(vectors) {
  return `${JSON.stringify(vectors, null, 2)}\n`;
}

function main(argv) {
  const text = render(buildVectors());
  if (argv.includes('--check')) {
    const current = fs.existsSync(OUTPUT) ? fs.readFileSync(OUTPUT, 'utf8') : '';
    if (current !== text) {
      process.stderr.write(
        `${path.relative(process.cwd(), OUTPUT)} is out of date: run node tooling/sdk-live/scripts/write-webhook-vectors.js\n`,
      );
      return 1;
    }
    return 0;
  }
  fs.mkdirSync(path.dirname(OUTPUT), { recursive: true });
  fs.writeFileSync(OUTPUT, text);
  process.stdout.write(`wrote ${path.relative(process.cwd(), OUTPUT)}\n`);
  return 0;
}

if (require.main === module) {
  require('@platform/hermetic').enforceForRun();
  process.exitCode = main(process.argv.slice(2));
}

module.exports = { OUTPUT, SPEC, buildVectors, render };

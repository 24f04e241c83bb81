/**
 * The shared webhook vectors (conformance/webhooks/vectors.json, signed by the server's own
 * signer) through this SDK's verifier: the PHP and Python SDKs run the same file, so the three
 * verifiers agree on every case.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Event } from '@platform/contract';
import { verifyWebhook, WebhookVerificationError } from './index';

interface Vector {
  name: string;
  secrets: string[];
  headers: Record<string, string>;
  body_b64: string;
  now: number;
  tolerance: number;
  expect: string;
  event_type?: string;
  expect_typescript?: string;
}

const FILE = path.resolve(__dirname, '../../../conformance/webhooks/vectors.json');
const { cases } = JSON.parse(readFileSync(FILE, 'utf8')) as { cases: Vector[] };

/** What this verifier says about a case, in the vectors' vocabulary (see their `expectations`). */
async function outcome(vector: Vector): Promise<{ outcome: string; event?: Event }> {
  try {
    const event = await verifyWebhook(
      Buffer.from(vector.body_b64, 'base64'),
      vector.headers,
      vector.secrets,
      { now: new Date(vector.now * 1000), toleranceSeconds: vector.tolerance },
    );
    return { outcome: 'ok', event };
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    switch (error.reason) {
      // A failed signature on a body that does not look like the server's: a nuance of this SDK.
      case 'body_not_raw':
        return { outcome: 'no_valid_signature' };
      // Both come only after the signature verified: the body is signed but not a known event.
      case 'invalid_payload':
      case 'unknown_event_type':
        return { outcome: 'ok (signed, not an event)' };
      case 'missing_header':
      case 'invalid_timestamp':
      case 'timestamp_outside_tolerance':
      case 'no_valid_signature':
      case 'invalid_secret':
        return { outcome: error.reason };
    }
  }
}

describe('shared webhook vectors', () => {
  it('holds the spec example and every outcome', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
    expect(new Set(cases.map((c) => c.expect))).toEqual(
      new Set([
        'ok',
        'missing_header',
        'invalid_timestamp',
        'timestamp_outside_tolerance',
        'no_valid_signature',
        'invalid_secret',
      ]),
    );
  });

  it.each(cases.map((vector) => [vector.name, vector] as const))('%s', async (_name, vector) => {
    const expected = vector.expect_typescript ?? vector.expect;
    const result = await outcome(vector);
    if (expected !== 'ok') {
      expect(result.outcome).toBe(expected);
    } else if (vector.event_type) {
      expect(result.outcome).toBe('ok');
      expect(result.event?.type).toBe(vector.event_type);
    } else {
      expect(result.outcome).toBe('ok (signed, not an event)');
    }
  });
});

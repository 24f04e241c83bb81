/**
 * conformance/webhooks/vectors.json is what the generator writes today: a change to the server's
 * signer, its delivery body or the contract's events that is not regenerated fails here.
 */
const fs = require('node:fs');
const { OUTPUT, SPEC, buildVectors, render } = require('../scripts/write-webhook-vectors');

const REASONS = [
  'ok',
  'missing_header',
  'invalid_timestamp',
  'timestamp_outside_tolerance',
  'no_valid_signature',
  'invalid_secret',
];

describe('webhook vectors', () => {
  const vectors = buildVectors();

  it('match the committed file (regenerate: node tooling/sdk-live/scripts/write-webhook-vectors.js)', () => {
    expect(fs.readFileSync(OUTPUT, 'utf8')).toBe(render(vectors));
  });

  it("reproduce the Standard Webhooks spec example with the server's signer", () => {
    const spec = vectors.cases.find((c) => c.name === 'spec/standard-webhooks-example');
    expect(spec).toMatchObject({
      secrets: [SPEC.secret],
      headers: {
        'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
        'webhook-timestamp': '1614265330',
        'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
      },
      now: 1614265330,
      expect: 'ok',
    });
    expect(Buffer.from(spec.body_b64, 'base64').toString('utf8')).toBe('{"test": 2432232314}');
  });

  it('use only the shared outcomes, with unique names', () => {
    for (const c of vectors.cases) {
      expect(REASONS).toContain(c.expect);
      if (c.event_type) expect(c.expect).toBe('ok');
    }
    expect(new Set(vectors.cases.map((c) => c.name)).size).toBe(vectors.cases.length);
  });

  it('are the same on every run', () => {
    expect(render(buildVectors())).toBe(render(vectors));
  });
});

// Proves that the built SDK (dist/, through its package exports) still runs on Node 18, the oldest
// Node it supports, while the workspace itself runs on Node 24. CI runs it under Node 18 from npm:
//   npx --yes --package=node@18.20.8 -- node packages/client/scripts/node18-smoke.mjs
// It talks only to a server of its own on 127.0.0.1.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

const [major] = process.versions.node.split('.').map(Number);
if (major !== 18) {
  console.error(`node18-smoke: run me on Node 18 (this is ${process.version}); see the header.`);
  process.exit(1);
}

const esm = await import('@platform/client');
const cjs = createRequire(import.meta.url)('@platform/client');

// A client makes a real request (global fetch, Headers, AbortController) and maps the answer.
const idempotencyKeys = [];
const server = createServer((req, res) => {
  if (req.method === 'POST') idempotencyKeys.push(req.headers['idempotency-key']);
  res.writeHead(404, { 'content-type': 'application/problem+json', 'x-request-id': 'req_smoke' });
  res.end(
    JSON.stringify({
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      detail: `No student ${req.url}`,
      code: 'not_found',
    }),
  );
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${server.address().port}`;
try {
  for (const sdk of [esm, cjs]) {
    const client = sdk.createClient({ baseUrl, token: 'pat_smoke', maxRetries: 0 });
    await assert.rejects(client.students.retrieve({ params: { id: 'stu_missing' } }), (error) => {
      assert.ok(error instanceof sdk.PlatformNotFoundError, String(error));
      assert.equal(error.status, 404);
      return true;
    });
    // A POST carries a generated Idempotency-Key (Web Crypto from node:crypto on Node 18).
    await assert.rejects(
      client.students.create({
        body: { student_number: 'S-1', first_name: 'Ada', last_name: 'Lovelace' },
      }),
      sdk.PlatformNotFoundError,
    );
  }
  assert.equal(idempotencyKeys.length, 2);
  for (const key of idempotencyKeys) assert.match(key ?? '', /^[0-9a-f-]{36}$/);
} finally {
  server.close();
}

// Node 18 has Web Crypto but not as a global (that came in Node 19): the SDK falls back to
// node:crypto's, so nothing is set here, and the verifier, PKCE and idempotency keys must work.
assert.equal(globalThis.crypto, undefined, 'Node 18 should have no global crypto');

// The webhook verifier (Web Crypto) accepts the server-signed conformance vectors and refuses a
// tampered body, with the same outcome in ESM and CommonJS.
const vectors = JSON.parse(
  readFileSync(new URL('../../../conformance/webhooks/vectors.json', import.meta.url), 'utf8'),
);
const signed = vectors.cases.find((c) => c.expect === 'ok' && c.event_type);
assert.ok(signed, 'conformance/webhooks/vectors.json has no valid signed event');
const body = Buffer.from(signed.body_b64, 'base64').toString('utf8');
const options = { now: new Date(signed.now * 1000), toleranceSeconds: signed.tolerance };
for (const sdk of [esm, cjs]) {
  const event = await sdk.verifyWebhook(body, signed.headers, signed.secrets, options);
  assert.equal(event.type, signed.event_type);
  await assert.rejects(
    sdk.verifyWebhook(`${body} `, signed.headers, signed.secrets, options),
    sdk.WebhookVerificationError,
  );
}

// The PKCE helper: a fresh verifier and its S256 challenge.
for (const sdk of [esm, cjs]) {
  const request = await sdk.buildAuthorizationUrl({
    baseUrl,
    clientId: 'oac_smoke',
    redirectUri: 'http://127.0.0.1/callback',
    scope: ['students:read'],
  });
  assert.match(request.codeVerifier, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(new URL(request.url).searchParams.get('code_challenge_method'), 'S256');
}

// The platform-listen command (dist/listen.js): it reads the newest cursor, follows the feed
// and POSTs the change signed with --secret, which the verifier accepts; SIGINT stops it (exit 0).
const secret = signed.secrets[0];
const change = { ...JSON.parse(body), position: 8, cursor: '8.AAAAAAAAAA' };
let delivered;
const api = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const json = (value) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (url.pathname === '/v1/events')
      return json({ object: 'list', data: [{ ...change, position: 7, cursor: '7.AAAAAAAAAA' }] });
    if (url.pathname === '/v1/changes') {
      const after = url.searchParams.get('after');
      if (after === '7.AAAAAAAAAA')
        return json({ data: [change], next_cursor: change.cursor, has_more: false });
      return setTimeout(() => json({ data: [], next_cursor: after, has_more: false }), 200);
    }
    delivered = { body: Buffer.concat(chunks).toString('utf8'), headers: req.headers };
    res.writeHead(204).end();
  });
});
await new Promise((resolve) => api.listen(0, '127.0.0.1', resolve));
const apiUrl = `http://127.0.0.1:${api.address().port}`;
const listen = spawn(
  process.execPath,
  [
    new URL('../bin/platform-listen.js', import.meta.url).pathname,
    '--forward-to',
    `${apiUrl}/hooks`,
    '--secret',
    secret,
  ],
  { env: { ...process.env, PLATFORM_URL: apiUrl, PLATFORM_TOKEN: 'pat_smoke' }, stdio: 'inherit' },
);
try {
  for (let waited = 0; !delivered; waited += 50) {
    assert.ok(waited < 10_000, 'platform-listen forwarded nothing in 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
} finally {
  listen.kill('SIGINT');
}
const [code] = await new Promise((resolve) => listen.on('exit', (...args) => resolve(args)));
api.close();
assert.equal(code, 0);
assert.equal(delivered.headers['webhook-position'], '8');
const forwarded = await esm.verifyWebhook(delivered.body, delivered.headers, secret);
assert.equal(forwarded.id, change.id);

console.log(
  `node18-smoke: the built SDK and platform-listen work on Node ${process.versions.node} (ESM and CommonJS).`,
);

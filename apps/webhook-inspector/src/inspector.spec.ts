import type { AddressInfo } from 'node:net';
import { signWebhook } from '@platform/client';
import { createInspector, type Inspector, type InspectorOptions } from './inspector';
import type { ReceivedDelivery } from './types';

// Real secrets in the Standard Webhooks form: whsec_ + base64 of random bytes.
const SECRET_A = `whsec_${Buffer.from('inspector-test-secret-a-32-bytes!').toString('base64')}`;
const SECRET_B = `whsec_${Buffer.from('inspector-test-secret-b-32-bytes!').toString('base64')}`;

function pingEvent(message = 'hello', id = 'evt_01JD6Y3ZK8R5V2N3M4P5Q6R7S8') {
  return {
    id,
    object: 'event',
    type: 'ping',
    timestamp: new Date().toISOString(),
    api_version: 'v1',
    data: { message },
  };
}

const running: Inspector[] = [];

async function start(options: InspectorOptions): Promise<{ inspector: Inspector; url: string }> {
  const inspector = createInspector(options);
  running.push(inspector);
  await new Promise<void>((resolve) => inspector.server.listen(0, '127.0.0.1', resolve));
  const { port } = inspector.server.address() as AddressInfo;
  return { inspector, url: `http://127.0.0.1:${port}` };
}

afterEach(async () => {
  await Promise.all(
    running.splice(0).map(
      ({ server }) =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    ),
  );
});

/** Signs `payload` with `secret` and POSTs it with the headers the SDK returned. */
async function deliver(
  url: string,
  payload: unknown,
  secret: string | string[],
  id = 'msg_01JD6Y3ZK8R5V2N3M4P5Q6R7S8',
): Promise<Response> {
  const body = JSON.stringify(payload);
  const headers = await signWebhook(body, secret, { id, timestamp: new Date() });
  return fetch(`${url}/webhooks`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Platform-Webhooks/1',
      ...headers,
    },
    body,
  });
}

async function listDeliveries(url: string): Promise<ReceivedDelivery[]> {
  const res = await fetch(`${url}/deliveries`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return (await res.json()) as ReceivedDelivery[];
}

async function page(url: string): Promise<string> {
  const res = await fetch(`${url}/`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  return res.text();
}

describe('webhook inspector', () => {
  it('accepts a delivery signed with the secret: 204, listed as verified in JSON and HTML', async () => {
    const { inspector, url } = await start({ secrets: () => [SECRET_A] });
    const event = pingEvent();

    const res = await deliver(url, event, SECRET_A, 'msg_01JD6Y3ZK8R5V2N3M4P5Q6R7AA');
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');

    const [delivery, ...rest] = await listDeliveries(url);
    expect(rest).toEqual([]);
    expect(delivery).toMatchObject({
      seq: 1,
      verified: true,
      webhookId: 'msg_01JD6Y3ZK8R5V2N3M4P5Q6R7AA',
      event: { id: event.id, type: 'ping' },
      body: JSON.stringify(event),
      payload: event,
    });
    expect(delivery!.error).toBeUndefined();
    expect(new Date(delivery!.receivedAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
    // Every header, as received.
    expect(delivery!.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Platform-Webhooks/1',
      'webhook-id': 'msg_01JD6Y3ZK8R5V2N3M4P5Q6R7AA',
      'webhook-signature': expect.stringMatching(/^v1,/),
      'webhook-timestamp': expect.stringMatching(/^\d+$/),
      host: expect.any(String),
    });
    expect(inspector.deliveries()).toEqual([delivery]);

    const html = await page(url);
    expect(html).toContain('✓ verified');
    expect(html).toContain('<code class="type">ping</code>');
    expect(html).toContain('msg_01JD6Y3ZK8R5V2N3M4P5Q6R7AA');
    expect(html).toContain(event.id);
    expect(html).toContain('Verifying with 1 signing secret.');
    expect(html).toContain('&quot;message&quot;: &quot;hello&quot;'); // pretty-printed payload
    expect(html).not.toContain('No deliveries yet');
  });

  it('refuses a delivery signed with another secret: 400 no_valid_signature, listed as not verified', async () => {
    const { url } = await start({ secrets: () => [SECRET_A] });

    const res = await deliver(url, pingEvent(), SECRET_B);
    expect(res.status).toBe(400);
    const answer = (await res.json()) as { error: string; reason: string };
    expect(answer).toEqual({
      error: expect.stringMatching(/^No valid signature/),
      reason: 'no_valid_signature',
    });

    const [delivery] = await listDeliveries(url);
    expect(delivery).toMatchObject({
      verified: false,
      error: { reason: 'no_valid_signature', message: answer.error },
      payload: { type: 'ping' },
    });
    expect(delivery!.event).toBeUndefined();

    const html = await page(url);
    expect(html).toContain('✗ not verified: <code>no_valid_signature</code>');
    expect(html).toContain('<small>(claimed)</small>');
    expect(html).not.toContain('✓ verified');
  });

  it('escapes attacker-controlled text on the page', async () => {
    const { url } = await start({ secrets: () => [SECRET_A] });
    const attack = '<script>alert(document.cookie)</script>';
    const event = { ...pingEvent(attack), type: '<img src=x onerror=alert(1)>' };

    const res = await fetch(`${url}/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': '"><script>alert(2)</script>',
        'x-evil': "<b onmouseover='alert(3)'>",
      },
      body: JSON.stringify(event),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { reason: string }).reason).toBe('missing_header');

    const html = await page(url);
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<b onmouseover');
    expect(html.match(/<script/g)).toHaveLength(1); // the page's own refresh script only
    expect(html).toContain('&lt;script&gt;alert(document.cookie)&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;');
    expect(html).toContain('&lt;b onmouseover=&#39;alert(3)&#39;&gt;');

    // And the page may run no script but its own.
    const csp = (await fetch(`${url}/`)).headers.get('content-security-policy');
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'nonce-[A-Za-z0-9+/=]+'/);
  });

  it('asks for the secrets on every delivery, so a rotation needs no restart', async () => {
    let secrets = [SECRET_A];
    let calls = 0;
    const { url } = await start({
      secrets: async () => {
        calls++;
        await Promise.resolve();
        return secrets;
      },
    });

    expect((await deliver(url, pingEvent(), SECRET_A, 'msg_1')).status).toBe(204);
    secrets = [SECRET_B];
    expect((await deliver(url, pingEvent(), SECRET_A, 'msg_2')).status).toBe(400);
    expect((await deliver(url, pingEvent(), SECRET_B, 'msg_3')).status).toBe(204);
    secrets = [SECRET_B, SECRET_A]; // during a rotation, either is accepted
    expect((await deliver(url, pingEvent(), SECRET_A, 'msg_4')).status).toBe(204);
    expect((await deliver(url, pingEvent(), SECRET_B, 'msg_5')).status).toBe(204);
    expect(calls).toBeGreaterThanOrEqual(5);

    const deliveries = await listDeliveries(url);
    expect(deliveries.map((d) => [d.webhookId, d.verified, d.error?.reason])).toEqual([
      ['msg_5', true, undefined],
      ['msg_4', true, undefined],
      ['msg_3', true, undefined],
      ['msg_2', false, 'no_valid_signature'],
      ['msg_1', true, undefined],
    ]);
  });

  it('keeps the last maxDeliveries deliveries, newest first', async () => {
    const { inspector, url } = await start({ secrets: () => [SECRET_A], maxDeliveries: 3 });
    for (let i = 1; i <= 5; i++) {
      expect((await deliver(url, pingEvent(`#${i}`), SECRET_A, `msg_${i}`)).status).toBe(204);
    }
    const deliveries = await listDeliveries(url);
    expect(deliveries.map((d) => [d.seq, d.webhookId])).toEqual([
      [5, 'msg_5'],
      [4, 'msg_4'],
      [3, 'msg_3'],
    ]);
    expect(inspector.deliveries()).toEqual(deliveries);
    const html = await page(url);
    expect(html).not.toContain('msg_2');
    expect(html.indexOf('msg_5')).toBeLessThan(html.indexOf('msg_3'));
  });

  it('counts the attempts of one message (the platform retries what was refused)', async () => {
    let secrets: string[] = [SECRET_B];
    const { url } = await start({ secrets: () => secrets });
    expect((await deliver(url, pingEvent(), SECRET_A, 'msg_retried')).status).toBe(400);
    secrets = [SECRET_A];
    expect((await deliver(url, pingEvent(), SECRET_A, 'msg_retried')).status).toBe(204);
    const html = await page(url);
    expect(html).toContain('<small>attempt 2</small>');
  });

  it('shows why nothing can be verified when the secrets are unavailable', async () => {
    const { url } = await start({
      secrets: () => {
        throw new Error(
          'The secret file /x/webhook-inspector.secret is missing, so nothing can be verified.',
        );
      },
    });
    const res = await deliver(url, pingEvent(), SECRET_A);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'The secret file /x/webhook-inspector.secret is missing, so nothing can be verified.',
      reason: 'no_secret',
    });
    const [delivery] = await listDeliveries(url);
    expect(delivery).toMatchObject({ verified: false, error: { reason: 'no_secret' } });
    const html = await page(url);
    expect(html).toContain(
      '<strong>Cannot verify:</strong> The secret file /x/webhook-inspector.secret is missing',
    );
    expect(html).toContain('✗ not verified: <code>no_secret</code>');
  });

  it('treats an empty list of secrets as no secret', async () => {
    const { url } = await start({ secrets: () => [] });
    const res = await deliver(url, pingEvent(), SECRET_A);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ reason: 'no_secret' });
  });

  it('refuses a body over 1 MiB with 413 and lists it', async () => {
    const { url } = await start({ secrets: () => [SECRET_A] });
    const res = await fetch(`${url}/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': 'msg_big' },
      body: 'x'.repeat(1024 * 1024 + 1),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ reason: 'payload_too_large' });
    const [delivery] = await listDeliveries(url);
    expect(delivery).toMatchObject({
      webhookId: 'msg_big',
      body: '',
      verified: false,
      error: { reason: 'payload_too_large' },
    });

    // Exactly 1 MiB is read (and is not a signed event).
    const limit = await fetch(`${url}/webhooks`, { method: 'POST', body: 'x'.repeat(1024 * 1024) });
    expect(limit.status).toBe(400);
    expect(await limit.json()).toMatchObject({ reason: 'missing_header' });
  });

  it('stops reading a chunked body at 1 MiB, without a content-length to go by', async () => {
    const { url } = await start({ secrets: () => [SECRET_A] });
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // Up to 4 MiB, unless the inspector stops listening before.
        if (sent >= 64) return controller.close();
        sent++;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${url}/webhooks`, {
      method: 'POST',
      body,
      duplex: 'half',
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ reason: 'payload_too_large' });
    const [delivery] = await listDeliveries(url);
    expect(delivery).toMatchObject({ error: { reason: 'payload_too_large' } });
    expect(delivery!.headers['transfer-encoding']).toBe('chunked');
    expect(delivery!.headers['content-length']).toBeUndefined();
  });

  it('has an empty state that says how to get a delivery', async () => {
    const { url } = await start({ secrets: () => [SECRET_A] });
    const html = await page(url);
    expect(html).toContain('No deliveries yet');
    expect(html).toContain('create an enrollment with the API');
    expect(html).toContain(`POST ${url}/webhooks`);
    expect(html).toMatch(/<noscript><meta http-equiv="refresh" content="2"><\/noscript>/);
    expect(await listDeliveries(url)).toEqual([]);
  });

  it.each([
    { method: 'GET', path: '/nope', status: 404, allow: null },
    { method: 'POST', path: '/webhook', status: 404, allow: null },
    { method: 'GET', path: '/webhooks', status: 405, allow: 'POST' },
    { method: 'DELETE', path: '/webhooks', status: 405, allow: 'POST' },
    { method: 'POST', path: '/', status: 405, allow: 'GET, HEAD' },
    { method: 'PUT', path: '/deliveries', status: 405, allow: 'GET, HEAD' },
  ])('answers $method $path with $status', async ({ method, path, status, allow }) => {
    const { inspector, url } = await start({ secrets: () => [SECRET_A] });
    const res = await fetch(`${url}${path}`, { method, body: method === 'GET' ? undefined : '{}' });
    expect(res.status).toBe(status);
    expect(res.headers.get('allow')).toBe(allow);
    expect(await res.json()).toEqual({ error: expect.any(String) });
    expect(inspector.deliveries()).toEqual([]);
  });

  it('rejects a maxDeliveries below 1', () => {
    expect(() => createInspector({ secrets: () => [], maxDeliveries: 0 })).toThrow(RangeError);
  });
});

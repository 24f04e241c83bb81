import { MAX_WEBHOOK_ENDPOINTS } from '@platform/contract';
import { type BodyOf, expectStatus, typedClient, type TypedClient } from './support/api';
import { problemOf, rawClient, startServer, type TestServer } from './support/server';

type Events = BodyOf<TypedClient['webhookEndpoints']['create']>['events'];

/** The endpoints API as production runs it: https and public addresses only. */
describe('webhook endpoints API', () => {
  let server: TestServer;
  let api: TypedClient;
  /** The same token, for what the contract's types refuse: unknown fields, event types, filters. */
  let raw: ReturnType<typeof rawClient>;
  // *.test resolves, in tests only, to an address that looks public and that nothing can reach
  // (tooling/hermetic): the SSRF guard accepts it and no delivery ever leaves the machine.
  const PUBLIC_URL = 'https://hooks.school.test/hooks';

  beforeAll(async () => {
    server = await startServer({ WEBHOOK_DISPATCHER: 'false' });
    const org = await server.createOrganization();
    const { token } = await server.createToken(org.id, ['all']);
    api = typedClient(server, token);
    raw = rawClient(server, token);
  });

  /** Creates an endpoint, which must succeed. */
  async function create(
    caller: TypedClient,
    body: BodyOf<TypedClient['webhookEndpoints']['create']>,
  ) {
    return expectStatus(await caller.webhookEndpoints.create({ body }), 201).body;
  }
  afterAll(() => server.close());

  it('creates an endpoint and shows its whsec_ secret once', async () => {
    const created = expectStatus(
      await api.webhookEndpoints.create({
        body: {
          url: PUBLIC_URL,
          events: ['enrollment.created', 'payment.succeeded'],
          description: 'Billing sync',
        },
      }),
      201,
    );
    expect(created.body).toMatchObject({
      object: 'webhook_endpoint',
      url: PUBLIC_URL,
      events: ['enrollment.created', 'payment.succeeded'],
      description: 'Billing sync',
      enabled: true,
      disabled_reason: null,
    });
    expect(created.body.id).toMatch(/^whe_/);
    const key = Buffer.from(created.body.secret.slice('whsec_'.length), 'base64');
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(key.length).toBeGreaterThanOrEqual(24);

    const read = expectStatus(
      await api.webhookEndpoints.retrieve({ params: { id: created.body.id } }),
      200,
    );
    expect(read.body).not.toHaveProperty('secret');
    const { secret: _secret, ...shown } = created.body;
    expect(read.body).toEqual(shown);
    // Stored encrypted: the secret does not appear in the database in clear.
    const rows = await server.dataSource.query('SELECT secret FROM webhook_endpoints');
    expect(JSON.stringify(rows)).not.toContain(created.body.secret.slice(6));
  });

  it.each([
    { url: 'http://hooks.school.test/hooks', message: /https/ },
    { url: 'https://127.0.0.1/hooks', message: /loopback/ },
    { url: 'https://10.1.2.3/hooks', message: /private/ },
    { url: 'https://169.254.169.254/latest/meta-data', message: /link-local|linkLocal/i },
    { url: 'https://user:pass@hooks.school.test/', message: /password|credentials|user/i },
    { url: 'not a url', message: /absolute URL|valid URL/i },
  ])('refuses $url with a 400 that says why', async ({ url, message }) => {
    const res = await api.webhookEndpoints.create({ body: { url, events: ['*'] } });
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const [error] = expectStatus(res, 400).body.errors ?? [];
    expect(error?.path).toBe('body.url');
    expect(error?.message).toMatch(message);
  });

  it.each<{ events: Events; message: RegExp }>([
    { events: [], message: /at least one/ },
    { events: ['*', 'payment.created'], message: /cannot be combined/ },
    { events: ['payment.created', 'payment.created'], message: /repeat/ },
  ])('refuses events $events', async ({ events, message }) => {
    const res = await api.webhookEndpoints.create({ body: { url: PUBLIC_URL, events } });
    expect(JSON.stringify(expectStatus(res, 400).body.errors)).toMatch(message);
  });

  it.each([
    { events: ['payment.exploded'], message: /Invalid enum value/ },
    { events: ['ping'], message: /Invalid enum value/ },
  ])('refuses events $events', async ({ events, message }) => {
    // Event types no endpoint can subscribe to are beyond the contract's types: sent raw.
    const res = await raw.post('/v1/webhook_endpoints', { url: PUBLIC_URL, events });
    expect(res.status).toBe(400);
    expect(JSON.stringify(problemOf(res).errors)).toMatch(message);
  });

  it('updates only the fields sent, and disabling records that it was requested', async () => {
    const ep = await create(api, { url: PUBLIC_URL, events: ['*'] });
    const byId = { params: { id: ep.id } };
    const updated = expectStatus(
      await api.webhookEndpoints.update({
        ...byId,
        body: { events: ['exam_result.published'], enabled: false },
      }),
      200,
    );
    expect(updated.body).toMatchObject({
      url: PUBLIC_URL,
      events: ['exam_result.published'],
      enabled: false,
      disabled_reason: 'requested',
      description: null,
    });
    expect(Date.parse(updated.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(ep.updated_at));
    const bad = await api.webhookEndpoints.update({
      ...byId,
      body: { url: 'https://192.168.1.1/' },
    });
    expect(bad.status).toBe(400);
    // An unknown field is beyond the contract's types: sent raw.
    const unknown = await raw.patch(`/v1/webhook_endpoints/${ep.id}`, { secret: 'whsec_x' });
    expect(unknown.status).toBe(400);

    const disabled = await api.webhookEndpoints.list({ query: { enabled: 'false' } });
    expect(expectStatus(disabled, 200).body.data.map((e) => e.id)).toEqual([ep.id]);
    const enabled = await api.webhookEndpoints.list({ query: { enabled: 'true' } });
    const enabledIds = expectStatus(enabled, 200).body.data.map((e) => e.id);
    expect(enabledIds).not.toContain(ep.id);
    expect(enabledIds.length).toBeGreaterThan(0);
  });

  it('rotate_secret returns a new secret; test and retry refuse a disabled endpoint', async () => {
    const ep = await create(api, { url: PUBLIC_URL, events: ['*'], enabled: false });
    const byId = { params: { id: ep.id } };
    const rotated = expectStatus(await api.webhookEndpoints.rotateSecret(byId), 200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(ep.secret);
    const test = await api.webhookEndpoints.test(byId);
    expect(expectStatus(test, 409).body.detail).toMatch(/disabled/);
  });

  it('deleting an endpoint removes it and its deliveries', async () => {
    const ep = await create(api, { url: PUBLIC_URL, events: ['*'] });
    const byId = { params: { id: ep.id } };
    const ping = expectStatus(await api.webhookEndpoints.test(byId), 202);
    const deleted = await api.webhookEndpoints.delete(byId);
    expect(deleted.body).toEqual({ id: ep.id, object: 'webhook_endpoint', deleted: true });
    expect((await api.webhookEndpoints.retrieve(byId)).status).toBe(404);
    expect((await api.webhookDeliveries.retrieve({ params: { id: ping.body.id } })).status).toBe(
      404,
    );
  });

  it(`allows at most ${MAX_WEBHOOK_ENDPOINTS} endpoints per organization`, async () => {
    const org = await server.createOrganization();
    const own = typedClient(server, (await server.createToken(org.id, ['all'])).token);
    const body = { url: PUBLIC_URL, events: ['*'] } satisfies Parameters<typeof create>[1];
    for (let i = 0; i < MAX_WEBHOOK_ENDPOINTS; i += 1) {
      expect((await own.webhookEndpoints.create({ body })).status).toBe(201);
    }
    const over = await own.webhookEndpoints.create({ body });
    expect(expectStatus(over, 409).body.detail).toMatch(new RegExp(`${MAX_WEBHOOK_ENDPOINTS}`));
  });

  it('lists deliveries per endpoint with filters, and never shows another endpoint or organization', async () => {
    const a = await create(api, { url: PUBLIC_URL, events: ['*'] });
    const b = await create(api, { url: PUBLIC_URL, events: ['*'] });
    const ofA = { params: { id: a.id } };
    const pingA = expectStatus(await api.webhookEndpoints.test(ofA), 202).body;
    expectStatus(await api.webhookEndpoints.test({ params: { id: b.id } }), 202);
    const list = expectStatus(await api.webhookEndpoints.deliveries(ofA), 200);
    expect(list.body.data.map((d) => d.id)).toEqual([pingA.id]);
    expect(list.body.meta).toMatchObject({ total: 1 });
    const filtered = await api.webhookEndpoints.deliveries({
      ...ofA,
      query: { event_type: 'payment.created' },
    });
    expect(expectStatus(filtered, 200).body.data).toEqual([]);
    // A status no delivery can have is beyond the contract's types: sent raw.
    const bad = await raw.get(`/v1/webhook_endpoints/${a.id}/deliveries?status=lost`);
    expect(bad.status).toBe(400);

    const other = await server.createOrganization();
    const stranger = typedClient(server, (await server.createToken(other.id, ['all'])).token);
    const ofPing = { params: { id: pingA.id } };
    expect((await stranger.webhookEndpoints.deliveries(ofA)).status).toBe(404);
    expect((await stranger.webhookDeliveries.retrieve(ofPing)).status).toBe(404);
    expect((await stranger.webhookDeliveries.retry(ofPing)).status).toBe(404);
    const theirs = expectStatus(await stranger.webhookEndpoints.list(), 200);
    expect(theirs.body.data).toEqual([]);
  });
});

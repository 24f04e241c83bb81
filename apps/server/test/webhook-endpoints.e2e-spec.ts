import { MAX_WEBHOOK_ENDPOINTS } from '@platform/contract';
import { client, startServer, type TestServer } from './support/server';

/** The endpoints API as production runs it: https and public addresses only. */
describe('webhook endpoints API', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  // *.test resolves, in tests only, to an address that looks public and that nothing can reach
  // (tooling/hermetic): the SSRF guard accepts it and no delivery ever leaves the machine.
  const PUBLIC_URL = 'https://hooks.school.test/hooks';

  beforeAll(async () => {
    server = await startServer({ WEBHOOK_DISPATCHER: 'false' });
    const org = await server.createOrganization();
    api = client(server, (await server.createToken(org.id, ['all'])).token);
  });
  afterAll(() => server.close());

  it('creates an endpoint and shows its whsec_ secret once', async () => {
    const created = await api.post('/v1/webhook_endpoints', {
      url: PUBLIC_URL,
      events: ['enrollment.created', 'payment.succeeded'],
      description: 'Billing sync',
    });
    expect(created.status).toBe(201);
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

    const read = await api.get(`/v1/webhook_endpoints/${created.body.id}`);
    expect(read.status).toBe(200);
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
    const res = await api.post('/v1/webhook_endpoints', { url, events: ['*'] });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.errors[0].path).toBe('body.url');
    expect(res.body.errors[0].message).toMatch(message);
  });

  it.each([
    { events: [], message: /at least one/ },
    { events: ['*', 'payment.created'], message: /cannot be combined/ },
    { events: ['payment.created', 'payment.created'], message: /repeat/ },
    { events: ['payment.exploded'], message: /Invalid enum value/ },
    { events: ['ping'], message: /Invalid enum value/ },
  ])('refuses events $events', async ({ events, message }) => {
    const res = await api.post('/v1/webhook_endpoints', { url: PUBLIC_URL, events });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.errors)).toMatch(message);
  });

  it('updates only the fields sent, and disabling records that it was requested', async () => {
    const { body: ep } = await api.post('/v1/webhook_endpoints', {
      url: PUBLIC_URL,
      events: ['*'],
    });
    const updated = await api.patch(`/v1/webhook_endpoints/${ep.id}`, {
      events: ['exam_result.published'],
      enabled: false,
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      url: PUBLIC_URL,
      events: ['exam_result.published'],
      enabled: false,
      disabled_reason: 'requested',
      description: null,
    });
    expect(Date.parse(updated.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(ep.updated_at));
    const bad = await api.patch(`/v1/webhook_endpoints/${ep.id}`, { url: 'https://192.168.1.1/' });
    expect(bad.status).toBe(400);
    const unknown = await api.patch(`/v1/webhook_endpoints/${ep.id}`, { secret: 'whsec_x' });
    expect(unknown.status).toBe(400);

    const disabled = await api.get('/v1/webhook_endpoints?enabled=false');
    expect(disabled.body.data.map((e: { id: string }) => e.id)).toEqual([ep.id]);
    const enabled = await api.get('/v1/webhook_endpoints?enabled=true');
    expect(enabled.body.data.map((e: { id: string }) => e.id)).not.toContain(ep.id);
    expect(enabled.body.data.length).toBeGreaterThan(0);
  });

  it('rotate_secret returns a new secret; test and retry refuse a disabled endpoint', async () => {
    const { body: ep } = await api.post('/v1/webhook_endpoints', {
      url: PUBLIC_URL,
      events: ['*'],
      enabled: false,
    });
    const rotated = await api.post(`/v1/webhook_endpoints/${ep.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(ep.secret);
    const test = await api.post(`/v1/webhook_endpoints/${ep.id}/test`);
    expect(test.status).toBe(409);
    expect(test.body.detail).toMatch(/disabled/);
  });

  it('deleting an endpoint removes it and its deliveries', async () => {
    const { body: ep } = await api.post('/v1/webhook_endpoints', {
      url: PUBLIC_URL,
      events: ['*'],
    });
    const ping = await api.post(`/v1/webhook_endpoints/${ep.id}/test`);
    expect(ping.status).toBe(202);
    const deleted = await api.delete(`/v1/webhook_endpoints/${ep.id}`);
    expect(deleted.body).toEqual({ id: ep.id, object: 'webhook_endpoint', deleted: true });
    expect((await api.get(`/v1/webhook_endpoints/${ep.id}`)).status).toBe(404);
    expect((await api.get(`/v1/webhook_deliveries/${ping.body.id}`)).status).toBe(404);
  });

  it(`allows at most ${MAX_WEBHOOK_ENDPOINTS} endpoints per organization`, async () => {
    const org = await server.createOrganization();
    const own = client(server, (await server.createToken(org.id, ['all'])).token);
    for (let i = 0; i < MAX_WEBHOOK_ENDPOINTS; i += 1) {
      expect(
        (await own.post('/v1/webhook_endpoints', { url: PUBLIC_URL, events: ['*'] })).status,
      ).toBe(201);
    }
    const over = await own.post('/v1/webhook_endpoints', { url: PUBLIC_URL, events: ['*'] });
    expect(over.status).toBe(409);
    expect(over.body.detail).toMatch(new RegExp(`${MAX_WEBHOOK_ENDPOINTS}`));
  });

  it('lists deliveries per endpoint with filters, and never shows another endpoint or organization', async () => {
    const { body: a } = await api.post('/v1/webhook_endpoints', { url: PUBLIC_URL, events: ['*'] });
    const { body: b } = await api.post('/v1/webhook_endpoints', { url: PUBLIC_URL, events: ['*'] });
    const pingA = (await api.post(`/v1/webhook_endpoints/${a.id}/test`)).body;
    await api.post(`/v1/webhook_endpoints/${b.id}/test`);
    const list = await api.get(`/v1/webhook_endpoints/${a.id}/deliveries`);
    expect(list.body.data.map((d: { id: string }) => d.id)).toEqual([pingA.id]);
    expect(list.body.meta).toMatchObject({ total: 1 });
    const filtered = await api.get(
      `/v1/webhook_endpoints/${a.id}/deliveries?event_type=payment.created`,
    );
    expect(filtered.body.data).toEqual([]);
    const bad = await api.get(`/v1/webhook_endpoints/${a.id}/deliveries?status=lost`);
    expect(bad.status).toBe(400);

    const other = await server.createOrganization();
    const stranger = client(server, (await server.createToken(other.id, ['all'])).token);
    expect((await stranger.get(`/v1/webhook_endpoints/${a.id}/deliveries`)).status).toBe(404);
    expect((await stranger.get(`/v1/webhook_deliveries/${pingA.id}`)).status).toBe(404);
    expect((await stranger.post(`/v1/webhook_deliveries/${pingA.id}/retry`)).status).toBe(404);
    expect((await stranger.get('/v1/webhook_endpoints')).body.data).toEqual([]);
  });
});

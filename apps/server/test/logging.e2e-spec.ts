import { typedClient } from './support/api';
import { startServer, type TestServer } from './support/server';

describe('request logs', () => {
  let server: TestServer;
  const lines: string[] = [];

  beforeAll(async () => {
    server = await startServer(
      { LOG_LEVEL: 'info' },
      { logDestination: { write: (line: string) => void lines.push(line) } },
    );
  });
  afterAll(() => server.close());

  it('writes one JSON line per request with id, organization, route, status and latency, and never the token', async () => {
    const org = await server.createOrganization();
    const { token } = await server.createToken(org.id, ['students:read']);
    lines.length = 0;
    const ok = await typedClient(server, token).students.list({ query: { q: 'secret-search' } });
    const denied = await typedClient(server, `${token}x`).students.list();
    await new Promise((resolve) => setTimeout(resolve, 50));

    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({
      level: 30,
      request_id: ok.headers.get('x-request-id'),
      organization_id: org.id,
      method: 'GET',
      route: '/v1/students',
      status: 200,
      latency_ms: expect.any(Number),
    });
    expect(requests[1]).toMatchObject({
      request_id: denied.headers.get('x-request-id'),
      status: 401,
    });
    expect(requests[1].organization_id).toBeUndefined();
    const all = lines.join('\n');
    expect(all).not.toContain(token.slice(4));
    expect(all).not.toContain('secret-search');
  });

  it('logs an unmatched route as `unmatched`, never its raw path', async () => {
    lines.length = 0;
    const path = '/v1/export_download/expdl_mistyped-secret-token/ada@school.test';
    const res = await fetch(`${server.url}${path}`);
    expect(res.status).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 50));

    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      request_id: res.headers.get('x-request-id'),
      method: 'GET',
      route: 'unmatched',
      status: 404,
    });
    const all = lines.join('\n');
    expect(all).not.toContain('mistyped-secret-token');
    expect(all).not.toContain('ada@school.test');
  });
});

/**
 * Behind a load balancer (issue 30, defect 9): the balancer keeps idle connections to the server
 * for 60 s and reuses them. Node's default keep-alive of 5 s closed them first, and a request
 * the balancer sent on a connection the server had just closed became a 502. The server now
 * keeps an idle connection longer than that (HTTP_KEEP_ALIVE_TIMEOUT, 65 s).
 */
import http from 'node:http';
import { startServer, type TestServer } from './support/server';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** A GET on `agent`; whether it went out on a connection the agent had kept. */
function get(agent: http.Agent, path: string): Promise<{ status: number; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${server.url}${path}`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
    });
    req.on('error', reject);
  });
}

it('keeps an idle keep-alive connection open past 5 seconds, and says how long', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const first = await get(agent, '/health/live');
    expect(first).toEqual({ status: 200, reused: false });

    await new Promise((resolve) => setTimeout(resolve, 6000));
    const second = await get(agent, '/health/live');
    expect(second).toEqual({ status: 200, reused: true });
  } finally {
    agent.destroy();
  }
}, 20_000);

it('tells clients the idle timeout it keeps (Keep-Alive: timeout=65)', async () => {
  const res = await fetch(`${server.url}/health/live`);
  expect(res.headers.get('keep-alive')).toBe('timeout=65');
});

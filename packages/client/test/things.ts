/**
 * The SDK's transport tests' fixture: a small test contract of `things`, a client for it on
 * local servers (startLocalServer, closed after each test) and responders that fail on cue. Any
 * router gets a typed SDK surface, so a test contract stands in for the API.
 */
import { initContract } from '@ts-rest/core';
import type { ClientOptions } from '../src/client';
import { createClientFor } from '../src/client-for';
import {
  startLocalServer,
  sendJson,
  sendProblem,
  type LocalServer,
  type Responder,
} from './local-server';

interface Thing {
  id: string;
  name: string;
}

const c = initContract();
export const testContract = c.router({
  things: {
    list: {
      method: 'GET',
      path: '/v1/things',
      query: c.type<{ page?: number; per_page?: number }>(),
      responses: {
        200: c.type<{
          data: Thing[];
          meta: {
            page: number;
            per_page: number;
            total: number;
            total_pages: number;
            total_exact: boolean;
          };
          links: { next: string | null };
        }>(),
      },
      metadata: { scope: 'students:read', list: true } as const,
    },
    get: {
      method: 'GET',
      path: '/v1/things/:id',
      responses: { 200: c.type<Thing>() },
      metadata: { scope: 'students:read' } as const,
    },
    create: {
      method: 'POST',
      path: '/v1/things',
      body: c.type<{ name: string }>(),
      responses: { 201: c.type<Thing>() },
      metadata: { scope: 'students:write' } as const,
    },
    update: {
      method: 'PATCH',
      path: '/v1/things/:id',
      body: c.type<{ name: string }>(),
      responses: { 200: c.type<Thing>() },
      metadata: { scope: 'students:write' } as const,
    },
  },
});

/** The servers `serve` started; the suites close them after each test (`closeServers`). */
export const servers: LocalServer[] = [];

export async function closeServers(): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => s.close()));
}

export async function serve(respond: Responder): Promise<LocalServer> {
  const server = await startLocalServer(respond);
  servers.push(server);
  return server;
}

/** Records each wait instead of sleeping, so backoff tests take no time. */
export function recordingSleep() {
  const waits: number[] = [];
  return { waits, sleep: (ms: number) => (waits.push(ms), Promise.resolve()) };
}

export function sdk(server: { url: string }, options: Partial<ClientOptions> = {}) {
  return createClientFor(testContract, { baseUrl: server.url, token: 'pat_test', ...options });
}

export const thing = { id: 'thg_1', name: 'Globe' };

/** Answers `failures` in turn, then 200 (201 for POST) with `thing`. */
export function failThenSucceed(...failures: Responder[]): Responder {
  return (req, res, index) => {
    const fail = failures[index];
    if (fail) fail(req, res, index);
    else sendJson(res, req.method === 'POST' ? 201 : 200, thing);
  };
}

export const unavailable: Responder = (_req, res) => sendProblem(res, 503, 'service_unavailable');
export const dropConnection: Responder = (_req, res) => res.socket?.destroy();

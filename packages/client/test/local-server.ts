/**
 * A real HTTP server on 127.0.0.1 that answers from a script, for what the Platform server
 * cannot be made to do on demand (a 503, a dropped connection, a 429 that clears in 1 s).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** performance.now() when the request arrived. */
  at: number;
}

/** Called per request with its 0-based index; write the response (or destroy the socket). */
export type Responder = (req: RecordedRequest, res: ServerResponse, index: number) => void;

export interface LocalServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startLocalServer(respond: Responder): Promise<LocalServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      };
      requests.push(recorded);
      respond(recorded, res, requests.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Writes a JSON response. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Writes an RFC 9457 problem as the Platform server would. */
export function sendProblem(
  res: ServerResponse,
  status: number,
  code: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/problem+json',
    'x-request-id': 'req_local',
    ...headers,
  });
  res.end(
    JSON.stringify({
      type: `http://127.0.0.1:3000/docs/errors#${code}`,
      title: code,
      status,
      detail: `local ${code}`,
      instance: '/v1/things',
      code,
      request_id: 'req_local',
    }),
  );
}

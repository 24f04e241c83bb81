/**
 * The webhook inspector: `POST /webhooks` receives and verifies deliveries with the SDK, as a
 * real receiver would; `GET /` shows them, `GET /deliveries` returns them as JSON.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { verifyWebhook, WebhookVerificationError } from '@platform/client';
import { type CaughtMail, renderMailPage } from './mail-catcher';
import { renderPage } from './page';
import type { ReceivedDelivery, SecretsStatus } from './types';

export type { DeliveryErrorReason, ReceivedDelivery, SecretsStatus } from './types';

/** Bodies above this are refused with 413 and not read further. */
export const MAX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_MAX_DELIVERIES = 200;

export interface InspectorOptions {
  /**
   * The endpoint's signing secrets (`whsec_…`; two during a rotation), asked for on every
   * delivery so a new secret is picked up without a restart. May throw: the error's message is
   * shown on the delivery (e.g. "the secret file is missing").
   */
  secrets: () => string[] | Promise<string[]>;
  /** How many deliveries to keep, newest first. Default 200. */
  maxDeliveries?: number;
  /** The mail catcher's messages, shown at `GET /mail` (`pnpm dev`). */
  mail?: { messages: () => CaughtMail[]; smtpUrl: () => string };
}

export interface Inspector {
  /** Not listening yet: call `server.listen(port, host)`. */
  server: http.Server;
  /** The deliveries kept, newest first (a copy). */
  deliveries(): ReceivedDelivery[];
}

export function createInspector(options: InspectorOptions): Inspector {
  const maxDeliveries = options.maxDeliveries ?? DEFAULT_MAX_DELIVERIES;
  if (!Number.isInteger(maxDeliveries) || maxDeliveries < 1) {
    throw new RangeError(`maxDeliveries must be a whole number >= 1, got ${String(maxDeliveries)}`);
  }
  const store: ReceivedDelivery[] = [];
  let seq = 0;

  function record(delivery: Omit<ReceivedDelivery, 'seq'>): ReceivedDelivery {
    const stored = { seq: ++seq, ...delivery };
    store.unshift(stored);
    if (store.length > maxDeliveries) store.length = maxDeliveries;
    return stored;
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { pathname } = new URL(req.url ?? '/', 'http://inspector.invalid');
    const method = req.method ?? 'GET';
    const reading = method === 'GET' || method === 'HEAD';

    if (pathname === '/webhooks') {
      if (method !== 'POST') return methodNotAllowed(req, res, 'POST');
      return receive(req, res, options, record);
    }
    if (pathname === '/deliveries') {
      if (!reading) return methodNotAllowed(req, res, 'GET, HEAD');
      return sendJson(res, 200, [...store]);
    }
    if ((pathname === '/mail' || pathname === '/mail.json') && options.mail) {
      if (!reading) return methodNotAllowed(req, res, 'GET, HEAD');
      const messages = options.mail.messages();
      if (pathname === '/mail.json') return sendJson(res, 200, messages);
      return sendHtml(
        res,
        renderMailPage(messages, options.mail.smtpUrl()),
        "style-src 'unsafe-inline'",
      );
    }
    if (pathname === '/') {
      if (!reading) return methodNotAllowed(req, res, 'GET, HEAD');
      return sendPage(req, res, store, await secretsStatus(options));
    }
    discard(req);
    sendJson(res, 404, {
      error: `Nothing at ${pathname}: deliveries go to POST /webhooks; GET / shows them, GET /deliveries as JSON.`,
    });
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error('webhook inspector: request failed', error);
      if (!res.headersSent)
        sendJson(res, 500, { error: 'Internal error in the webhook inspector.' });
      else res.destroy();
    });
  });

  return { server, deliveries: () => [...store] };
}

async function loadSecrets(options: InspectorOptions): Promise<string[] | { message: string }> {
  try {
    const secrets = await options.secrets();
    if (secrets.length === 0) {
      return { message: 'No signing secret configured: the secrets option returned none.' };
    }
    return secrets;
  } catch (error) {
    return { message: error instanceof Error ? error.message : String(error) };
  }
}

async function secretsStatus(options: InspectorOptions): Promise<SecretsStatus> {
  const secrets = await loadSecrets(options);
  return Array.isArray(secrets)
    ? { ok: true, count: secrets.length }
    : { ok: false, message: secrets.message };
}

/** `POST /webhooks`: reads, verifies and records a delivery, and answers as a receiver would. */
async function receive(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  options: InspectorOptions,
  record: (delivery: Omit<ReceivedDelivery, 'seq'>) => ReceivedDelivery,
): Promise<void> {
  const receivedAt = new Date().toISOString();
  const headers = copyHeaders(req.headers);
  const webhookId = firstHeader(req.headers['webhook-id']) ?? null;

  const body = await readBody(req, MAX_BODY_BYTES);
  if (body === 'aborted') return; // nobody to answer, nothing complete to show
  if (body === 'too_large') {
    const message = `The body is over ${MAX_BODY_BYTES} bytes (1 MiB), the inspector's limit; it was not read.`;
    record({
      receivedAt,
      webhookId,
      headers,
      body: '',
      verified: false,
      error: { reason: 'payload_too_large', message },
    });
    // Stop reading the rest: answer now and close the connection.
    sendJson(res, 413, { error: message, reason: 'payload_too_large' }, { Connection: 'close' });
    return;
  }

  const text = body.toString('utf8');
  const payload = parseJson(text);
  const base = { receivedAt, webhookId, headers, body: text, ...payload };

  const secrets = await loadSecrets(options);
  if (!Array.isArray(secrets)) {
    record({
      ...base,
      verified: false,
      error: { reason: 'no_secret', message: secrets.message },
    });
    sendJson(res, 400, { error: secrets.message, reason: 'no_secret' });
    return;
  }

  try {
    const event = await verifyWebhook(body, req.headers, secrets);
    record({ ...base, verified: true, event: { id: event.id, type: event.type } });
    res.writeHead(204).end();
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    record({
      ...base,
      verified: false,
      error: { reason: error.reason, message: error.message },
    });
    sendJson(res, 400, { error: error.message, reason: error.reason });
  }
}

/** `GET /`: the deliveries as a page, under a strict content security policy. */
function sendPage(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  deliveries: ReceivedDelivery[],
  secrets: SecretsStatus,
): void {
  const nonce = randomBytes(16).toString('base64');
  const host = req.headers.host ?? 'localhost';
  const html = renderPage({
    deliveries,
    secrets,
    receiveUrl: `http://${host}/webhooks`,
    nonce,
  });
  sendHtml(res, html, `style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; connect-src 'self'`);
}

/**
 * An HTML page with its CSP: defence in depth, since payloads and mail are attacker-controlled
 * and everything is escaped anyway.
 */
function sendHtml(res: http.ServerResponse, html: string, allow: string): void {
  res.writeHead(200, {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Security-Policy': `default-src 'none'; ${allow}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  });
  res.end(html);
}

function methodNotAllowed(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  allow: string,
): void {
  discard(req);
  sendJson(
    res,
    405,
    { error: `${req.method} is not allowed here: use ${allow}.` },
    { Allow: allow },
  );
}

function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  res.end(JSON.stringify(body, null, 2));
}

/** Drains a body nobody will read, so the connection can be reused. */
function discard(req: http.IncomingMessage): void {
  req.resume();
}

/**
 * The whole body; 'too_large' as soon as it is known to be over `limit` bytes; 'aborted' when
 * the client went away before sending all of it.
 */
function readBody(
  req: http.IncomingMessage,
  limit: number,
): Promise<Buffer | 'too_large' | 'aborted'> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.resolve('too_large');
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume();
        resolve('too_large');
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve('aborted'));
    req.on('close', () => {
      if (!req.complete) resolve('aborted');
    });
  });
}

function parseJson(text: string): { payload?: unknown } {
  try {
    return { payload: JSON.parse(text) as unknown };
  } catch {
    return {};
  }
}

function copyHeaders(headers: http.IncomingHttpHeaders): Record<string, string | string[]> {
  const copy: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) copy[name] = Array.isArray(value) ? [...value] : value;
  }
  return copy;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

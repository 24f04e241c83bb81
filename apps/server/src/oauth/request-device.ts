import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import { normalizeIp } from '../rate-limit/organization-throttler.guard';

/** What a request to the authorization server says about where it came from. */
export interface RequestDevice {
  /** The User-Agent as sent, cut to 300 characters; null when none was sent. */
  userAgent: string | null;
  ip: string | null;
}

const USER_AGENT_MAX = 300;

const storage = new AsyncLocalStorage<RequestDevice>();

/**
 * Runs the authorization server's handling of `req` with its device known, so every session,
 * grant and token it saves records where it was last used (the adapter reads `requestDevice`).
 * `req.ip` is Express's, which follows `trust proxy` (TRUST_PROXY).
 */
export function withRequestDevice<T>(req: IncomingMessage & { ip?: string }, run: () => T): T {
  const agent = req.headers['user-agent'];
  const ip = req.ip ?? req.socket.remoteAddress;
  return storage.run(
    {
      userAgent: agent ? agent.slice(0, USER_AGENT_MAX) : null,
      ip: ip ? normalizeIp(ip) : null,
    },
    run,
  );
}

/** The device of the authorization server request being handled, if any. */
export function requestDevice(): RequestDevice | undefined {
  return storage.getStore();
}

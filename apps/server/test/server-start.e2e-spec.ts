/**
 * What `pnpm start` and `pnpm dev` print, with a real server process (`node dist/main.js`): the URL
 * a user copies is the OAuth issuer's origin, so discovery with openid-client works from it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { freePort, prepareDatabase } from '../src/testing';
import { oidc } from './support/oauth';
import { databaseOptions } from './support/server';

const MAIN = path.join(__dirname, '..', 'dist', 'main.js');

describe('the URL the server prints', () => {
  let db: Awaited<ReturnType<typeof prepareDatabase>>;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    db = await prepareDatabase(databaseOptions());
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await db.drop();
  });

  /** Starts `node dist/main.js`; resolves with the printed URL once it listens, and its stderr. */
  async function start(env: Record<string, string>): Promise<{ url: string; stderr: string }> {
    const child = spawn(process.execPath, [MAIN], {
      env: {
        ...process.env,
        DATABASE_URL: db.databaseUrl,
        WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
        WEBHOOK_DISPATCHER: 'false',
        LOG_LEVEL: 'silent',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    let stderr = '';
    return new Promise((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /\(docs: (http:\/\/\S+?)\/docs\)/.exec(output);
        if (match) resolve({ url: match[1]!, stderr });
      });
      child.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        stderr += chunk.toString();
      });
      child.on('exit', () => reject(new Error(`the server exited before listening:\n${output}`)));
    });
  }

  it('is the OAuth issuer: openid-client discovers the server from it', async () => {
    const port = await freePort();
    const { url } = await start({ PORT: String(port) });
    const config = await oidc.discovery(new URL(url), 'any-client', undefined, oidc.None(), {
      // RFC 8414 metadata: this is a plain OAuth 2.0 server; plain http on loopback.
      algorithm: 'oauth2',
      execute: [oidc.allowInsecureRequests],
    });
    expect(config.serverMetadata().issuer).toBe(url);
    expect(url).toBe(`http://127.0.0.1:${port}`);
  });

  it('starts on a Node LTS that oidc-provider supports: nothing on stderr', async () => {
    // oidc-provider prints "Unsupported runtime" at load on anything older than Node 22 LTS.
    const { stderr } = await start({ PORT: String(await freePort()) });
    expect(stderr).toBe('');
  });
});

/** A real redis-server for the suites that test Redis scripts (rate limits, delivery slots). */
import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from './index';

/** A redis-server of the suite's own, unless the run names one (`shared`: TEST_REDIS_URL in CI). */
export async function startRedis(shared?: string): Promise<{ url: string; stop(): void }> {
  if (shared) return { url: shared, stop: () => undefined };
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.stdout!.on('data', (chunk: Buffer) => {
      if (/Ready to accept connections/.test(chunk.toString())) resolve();
    });
  });
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill('SIGKILL') };
}

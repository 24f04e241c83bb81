import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Outcome } from './support';

const SCRIPTS = path.join(__dirname, '..', '..', '..', '..', 'scripts');

/** Prints the outcomes as one table, stops the suite's PostgreSQL and Redis. */
export default async function globalTeardown(): Promise<void> {
  const file = process.env.FAULTS_TABLE;
  if (file && existsSync(file)) {
    const rows = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Outcome);
    const header = [
      'scenario',
      'database',
      'sent',
      'acknowledged',
      'lost',
      'duplicated',
      '503 (documented)',
      'other 5xx',
      'replayed retries',
      'phantom webhooks',
      'recovery (s)',
    ];
    const lines = [
      `| ${header.join(' | ')} |`,
      `| ${header.map(() => '---').join(' | ')} |`,
      ...rows.map(
        (r) =>
          `| ${[r.scenario, r.database, r.sent, r.acknowledged, r.lost, r.duplicated, r.refused503, r.undocumented5xx, r.replays, r.phantomWebhooks, r.recoverySeconds ?? '–'].join(' | ')} |`,
      ),
    ];
    console.log(
      `\nFault injection (pnpm test:faults; the table of docs/operations.md#reliability):\n\n${lines.join('\n')}\n`,
    );
    for (const r of rows) if (r.note) console.log(`  ${r.scenario} (${r.database}): ${r.note}`);
  }
  for (const script of ['throwaway-postgres.sh', 'throwaway-redis.sh']) {
    try {
      execFileSync(path.join(SCRIPTS, script), ['stop'], { stdio: 'ignore' });
    } catch {
      // Already gone.
    }
  }
  if (process.env.FAULTS_DIR) rmSync(process.env.FAULTS_DIR, { recursive: true, force: true });
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS, untyped
  const hermetic: () => Promise<void> = require('@platform/hermetic/jest-global-teardown');
  await hermetic();
}

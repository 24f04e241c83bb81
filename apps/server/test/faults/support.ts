/**
 * What every fault scenario is built from: real server processes (`node dist/main.js`), a load of
 * keyed payments, a webhook receiver, and the invariants checked against the database itself
 * after recovery. Each scenario adds a row to the table the suite prints at the end.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { runPlatform } from '../support/cli';

export const DIST = path.join(__dirname, '..', '..', 'dist');
export const REPO = path.join(__dirname, '..', '..', '..', '..');

export interface Running {
  child: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

/** The server's settings for a scenario: its database, a fresh webhook key, quiet logs. */
export function serverEnv(databaseUrl: string, extra: Record<string, string> = {}) {
  return {
    DATABASE_URL: databaseUrl,
    WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_TIMEOUT: '2s',
    WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms,200ms,200ms',
    WEBHOOK_POLL_INTERVAL: '100ms',
    WEBHOOK_SHUTDOWN_GRACE: '3s',
    HTTP_SHUTDOWN_GRACE: '5s',
    RATE_LIMIT_DEFAULT: '1000000',
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** Starts `node dist/main.js` (or `command` with `args`) and resolves once it listens. */
export async function startProcess(
  env: Record<string, string>,
  options: { preload?: string; command?: string; args?: string[]; cwd?: string } = {},
): Promise<Running> {
  const clean = { ...process.env };
  for (const key of Object.keys(clean)) {
    if (
      /^(DATABASE_|REDIS_|WEBHOOK_|RATE_LIMIT_|HTTP_|PORT$|HOST$|LOG_LEVEL$|NODE_OPTIONS$)/.test(
        key,
      )
    )
      delete clean[key];
  }
  const child = spawn(
    options.command ?? process.execPath,
    options.args ?? [
      ...(options.preload ? ['--require', options.preload] : []),
      path.join(DIST, 'main.js'),
    ],
    {
      cwd: options.cwd ?? path.join(__dirname, '..', '..'),
      env: { ...clean, PORT: '0', HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" in 60 s:\n${output}`)), 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+?) /.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!.replace('localhost', '127.0.0.1'));
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the server exited before listening:\n${output}`));
    });
  });
  return { child, url, exited, output: () => output };
}

/** An organization, a token with every scope, and a student to record payments for. */
export async function organization(databaseUrl: string) {
  const cli = async (...args: string[]) => {
    const result = await runPlatform({ env: { DATABASE_URL: databaseUrl } }, ...args, '--json');
    if (result.code !== 0) throw new Error(`platform ${args.join(' ')}: ${result.stderr}`);
    return JSON.parse(result.stdout) as Record<string, string>;
  };
  const org = await cli('orgs:create', '--name', `Fault School ${randomUUID().slice(0, 6)}`);
  const { token } = await cli(
    'tokens:create',
    '--org',
    org.id!,
    '--name',
    'faults',
    '--scopes',
    'all',
  );
  return { organizationId: org.id!, token: token! };
}

export interface Sent {
  key: string;
  /** Sent before this instant (ms). */
  at: number;
  /** The last answer: a status, or a network error. */
  status?: number;
  retryAfter?: string | null;
  replayed?: boolean;
  error?: string;
  /** Every answer, first to last (retries included). */
  history: string[];
}

/**
 * Keyed `POST /v1/payments` for one student, each with `external_reference` = its key, so the
 * database shows how many times each key took effect.
 */
export class PaymentLoad {
  readonly sent = new Map<string, Sent>();
  private running = false;
  private loops: Promise<void>[] = [];
  url: string;

  constructor(
    url: string,
    private readonly token: string,
    private readonly studentId: string,
  ) {
    this.url = url;
  }

  async send(key: string): Promise<Sent> {
    const record = this.sent.get(key) ?? { key, at: Date.now(), history: [] };
    this.sent.set(key, record);
    try {
      const res = await fetch(`${this.url}/v1/payments`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${this.token}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': key,
        },
        body: JSON.stringify({
          student_id: this.studentId,
          amount: 1000,
          currency: 'EUR',
          external_reference: key,
        }),
        signal: AbortSignal.timeout(20_000),
      });
      const text = Buffer.from(await res.arrayBuffer()).toString('utf8');
      // An answer the outage table counts as undocumented: its problem, for the one reading CI.
      if (res.status >= 500 && (res.status !== 503 || !res.headers.get('retry-after')))
        console.error(
          `undocumented ${res.status} (Retry-After: ${res.headers.get('retry-after')}): ${text.slice(0, 300)}`,
        );
      record.status = res.status;
      record.retryAfter = res.headers.get('retry-after');
      record.replayed = res.headers.get('idempotent-replayed') === 'true';
      delete record.error;
      record.history.push(`${res.status}${record.replayed ? ' replayed' : ''}`);
      if (res.ok) this.successTimes.push(Date.now());
    } catch (error) {
      delete record.status;
      record.error =
        (error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      record.history.push(record.error);
    }
    return record;
  }

  start(writers = 8): void {
    this.running = true;
    this.loops = Array.from({ length: writers }, async () => {
      while (this.running) {
        const record = await this.send(randomUUID());
        if (record.error) await new Promise((r) => setTimeout(r, 50));
      }
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  acknowledged(): Sent[] {
    return [...this.sent.values()].filter((s) => s.history.some((h) => /^2\d\d/.test(h)));
  }

  /** Sends every request that never got a final answer again under its key, until it has one. */
  async retryUnanswered(deadlineMs = 30_000): Promise<void> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const open = [...this.sent.values()].filter(
        (s) => s.error !== undefined || s.status === 503 || s.status === 409,
      );
      if (open.length === 0) return;
      if (Date.now() > deadline)
        throw new Error(`${open.length} requests still unanswered: ${JSON.stringify(open[0])}`);
      for (const record of open) await this.send(record.key);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Seconds from `since` (ms) to the first 2xx answered after it; null if none came. */
  recoveredAfter(since: number): number | null {
    const at = this.successTimes.find((t) => t >= since);
    return at === undefined ? null : Math.round((at - since) / 100) / 10;
  }

  /** When each 2xx arrived (ms). */
  readonly successTimes: number[] = [];
}

/** Reads what the database holds, through a connection of its own. */
export async function databaseRows(
  databaseUrl: string,
  organizationId: string,
): Promise<{ payments: Map<string, number>; events: Set<string> }> {
  if (databaseUrl.startsWith('sqlite:')) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Database = require('better-sqlite3') as new (
      file: string,
      options?: object,
    ) => { prepare(sql: string): { all(...args: unknown[]): unknown[] }; close(): void };
    const db = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true });
    try {
      const payments = db
        .prepare(
          'SELECT external_reference AS ref, COUNT(*) AS n FROM payments WHERE organization_id = ? GROUP BY external_reference',
        )
        .all(organizationId) as { ref: string; n: number }[];
      const events = db
        .prepare('SELECT id FROM events WHERE organization_id = ?')
        .all(organizationId) as { id: string }[];
      return {
        payments: new Map(payments.map((p) => [p.ref, Number(p.n)])),
        events: new Set(events.map((e) => e.id)),
      };
    } finally {
      db.close();
    }
  }
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const payments = await client.query<{ ref: string; n: string }>(
      'SELECT external_reference AS ref, COUNT(*) AS n FROM payments WHERE organization_id = $1 GROUP BY external_reference',
      [organizationId],
    );
    const events = await client.query<{ id: string }>(
      'SELECT id FROM events WHERE organization_id = $1',
      [organizationId],
    );
    return {
      payments: new Map(payments.rows.map((p) => [p.ref, Number(p.n)])),
      events: new Set(events.rows.map((e) => e.id)),
    };
  } finally {
    await client.end();
  }
}

/** One row of the suite's table. */
export interface Outcome {
  scenario: string;
  database: string;
  sent: number;
  acknowledged: number;
  lost: number;
  duplicated: number;
  /** Answers 503 with Retry-After (the documented refusal while the fault lasts). */
  refused503: number;
  /** Retries answered from the stored response (the first attempt had committed). */
  replays: number;
  /** 5xx answers other than the documented 503 with Retry-After. */
  undocumented5xx: number;
  /** Webhooks delivered for events the database does not hold. */
  phantomWebhooks: number;
  recoverySeconds: number | null;
  note?: string;
}

/**
 * The invariants, from the load's answers and the database: every acknowledged key has exactly
 * one payment, none has two, every 5xx was a 503 with Retry-After, every delivered webhook's
 * event exists.
 */
export async function outcome(
  scenario: string,
  database: string,
  databaseUrl: string,
  organizationId: string,
  load: PaymentLoad,
  deliveredEventIds: string[],
  recoverySeconds: number | null,
  note?: string,
): Promise<Outcome> {
  const rows = await databaseRows(databaseUrl, organizationId);
  const answers = [...load.sent.values()].flatMap((s) => s.history);
  const acknowledged = load.acknowledged();
  const undocumented5xx = [...load.sent.values()].filter((s) =>
    s.history.some((h) => /^5\d\d/.test(h) && !h.startsWith('503')),
  ).length;
  const missingRetryAfter = [...load.sent.values()].filter(
    (s) => s.status === 503 && !/^[1-9]\d*$/.test(s.retryAfter ?? ''),
  ).length;
  return {
    scenario,
    database,
    sent: load.sent.size,
    acknowledged: acknowledged.length,
    lost: acknowledged.filter((s) => (rows.payments.get(s.key) ?? 0) === 0).length,
    duplicated: [...rows.payments.values()].filter((n) => n > 1).length,
    refused503: answers.filter((h) => h.startsWith('503')).length,
    replays: answers.filter((h) => h.endsWith('replayed')).length,
    undocumented5xx: undocumented5xx + missingRetryAfter,
    phantomWebhooks: deliveredEventIds.filter((id) => !rows.events.has(id)).length,
    recoverySeconds,
    ...(note && { note }),
    ...(answers.length === 0 && { note: 'no answers' }),
  };
}

/** Appends a row to the run's table file (FAULTS_TABLE, printed by the suite's teardown). */
export function report(row: Outcome): void {
  const file = process.env.FAULTS_TABLE;
  if (file) appendFileSync(file, `${JSON.stringify(row)}\n`);
}

/** PostgreSQL's server binaries and how to run them (as `postgres` when root). */
export function pgCtl(dataDir: string, ...args: string[]): void {
  const bin = execFileSync('sh', ['-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1'], {
    encoding: 'utf8',
  }).trim();
  const command = [`${bin}/pg_ctl`, '-D', dataDir, ...args];
  if (process.getuid?.() === 0)
    execFileSync('runuser', ['-u', 'postgres', '--', ...command], { stdio: 'ignore' });
  else execFileSync(command[0]!, command.slice(1), { stdio: 'ignore' });
}

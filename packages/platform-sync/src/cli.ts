/**
 * `platform-sync --database postgres://…|sqlite:path --token … [--base-url …]
 *  [--collections students,courses] [--once] [--verify] [--resnapshot-on-expiry]`
 */
import { parseArgs } from 'node:util';
import { databaseUrlProblem } from './database';
import { stderrLogger, type Logger } from './log';
import { EXIT, type MirrorOptions, runMirror } from './mirror';
import { MIRRORED_COLLECTIONS, parseCollections } from './schema';

export const USAGE = `Usage: platform-sync --database <url> --token <token> [options]

Mirrors an organization of the Platform API into PostgreSQL or SQLite: creates one table per
collection from the API's contract, loads an export of each, then follows the change feed, with
the cursor stored in the same transaction as the rows.

  --database <url>          postgres://user:password@host:5432/db or sqlite:path/to/mirror.db
                            (or PLATFORM_SYNC_DATABASE)
  --token <token>           an API token with exports:write, events:read and each collection's
                            read scope (or PLATFORM_TOKEN)
  --base-url <url>          the API's address, e.g. https://api.school.example (or PLATFORM_URL)
  --collections <list>      comma-separated; default every one: ${MIRRORED_COLLECTIONS.join(',')}
  --once                    stop once caught up with the feed (a cron job) instead of following
  --verify                  bring the mirror to the API's checksums cursor, compare every
                            collection, exit 1 naming any that differs
  --resnapshot-on-expiry    on 410 cursor_expired, load every collection again from a new export
                            (without it: say so and exit 3)
  --batch-size <rows>       export rows per transaction while loading (default 5000)
  -h, --help                this text

Exit codes: 0 done (or stopped by SIGINT/SIGTERM after committing), 1 --verify found a
difference, 2 a usage error, 3 the feed expired the cursor, 4 any other failure.`;

export class UsageError extends Error {}

function positiveInteger(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(text))
    throw new UsageError(`${name} must be a positive integer, got '${text}'`);
  return Number(text);
}

function required(name: string, value: string | undefined, env: string): string {
  if (value === undefined || value === '')
    throw new UsageError(`${name} is required (or set ${env})`);
  return value;
}

/** The command line (and environment) as the mirror's options; a UsageError naming what is wrong. */
export function parseCommandLine(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Omit<MirrorOptions, 'signal' | 'log'> | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        database: { type: 'string' },
        token: { type: 'string' },
        'base-url': { type: 'string' },
        collections: { type: 'string' },
        once: { type: 'boolean' },
        verify: { type: 'boolean' },
        'resnapshot-on-expiry': { type: 'boolean' },
        'batch-size': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values } = parsed;
  if (values.help) return 'help';
  if (values.once && values.verify) throw new UsageError('--once and --verify: choose one');
  let collections;
  try {
    collections = parseCollections(values.collections);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const database = required(
    '--database',
    values.database ?? env.PLATFORM_SYNC_DATABASE,
    'PLATFORM_SYNC_DATABASE',
  );
  const problem = databaseUrlProblem(database);
  if (problem !== null) throw new UsageError(problem);
  return {
    database,
    token: required('--token', values.token ?? env.PLATFORM_TOKEN, 'PLATFORM_TOKEN'),
    baseUrl: required('--base-url', values['base-url'] ?? env.PLATFORM_URL, 'PLATFORM_URL'),
    collections,
    once: values.once ?? false,
    verify: values.verify ?? false,
    resnapshotOnExpiry: values['resnapshot-on-expiry'] ?? false,
    batchRows: positiveInteger('--batch-size', values['batch-size']),
    pollMs: positiveInteger('PLATFORM_SYNC_POLL_MS', env.PLATFORM_SYNC_POLL_MS),
  };
}

/** SIGINT/SIGTERM abort the run after the transaction under way; a second one exits at once. */
function stopOnSignals(log: Logger): AbortController {
  const controller = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (controller.signal.aborted) process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
      log.info(`${signal}: stopping after the current transaction`);
      controller.abort();
    });
  }
  return controller;
}

/** The command: `bin/platform-sync.js` passes the process's arguments and environment. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const log = stderrLogger();
  let options;
  try {
    options = parseCommandLine(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log.error(error.message);
    process.stderr.write('Run platform-sync --help for the options.\n');
    return EXIT.usage;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const controller = stopOnSignals(log);
  try {
    return await runMirror({ ...options, signal: controller.signal, log });
  } catch (error) {
    if (controller.signal.aborted && (error as Error).name === 'AbortError') return EXIT.ok;
    log.error(error instanceof Error ? error.message : String(error));
    return EXIT.failed;
  }
}

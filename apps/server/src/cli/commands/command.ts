import type { INestApplicationContext } from '@nestjs/common';
import { InvalidArgumentError } from 'commander';

/** What every command prints: a human summary, or with --json the same facts as one JSON document. */
export interface Output {
  json: unknown;
  text: string;
}

/**
 * Where a run of the CLI reads and writes: the real process's streams and environment for the
 * binary (main.ts), or strings and a given environment for a test in Jest's own process.
 */
export interface CliIo {
  /**
   * The environment the configuration is read from (DATABASE_URL, AUDIT_RETENTION_DAYS, …) by
   * loadConfig; without it, the process's own, which only the config module reads.
   */
  env?: Record<string, string | undefined>;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Read by `users:create --password-stdin`; a TTY is refused. */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** Runs a command's work in a fresh application context; the run's exit code follows from it. */
export type WithContext = (
  run: (ctx: INestApplicationContext) => Promise<Output>,
  json: boolean,
) => Promise<void>;

export function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

import { Readable } from 'node:stream';
import { runCli } from '../../src/cli/program';

/** What a run of the admin CLI printed, and its exit code. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `pnpm platform <args…>` in Jest's own process: the same commands, output and exit codes
 * as the binary (test/cli-binary.e2e-spec.ts proves its wiring), without a process start each.
 * The environment is this process's plus `env`; stdin is `input` piped in (empty unless given).
 */
export async function runPlatform(
  options: { env: Record<string, string>; input?: string },
  ...args: string[]
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    env: { ...process.env, ...options.env },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Readable.from(options.input === undefined ? [] : [options.input]),
  });
  return { code, stdout, stderr };
}

/** Runs the CLI against the database at `databaseUrl` (DATABASE_URL). */
export function platform(databaseUrl: string, ...args: string[]): Promise<CliResult> {
  return runPlatform({ env: { DATABASE_URL: databaseUrl } }, ...args);
}

/** Runs the CLI with `input` piped to its stdin. */
export function platformWithInput(
  databaseUrl: string,
  input: string,
  ...args: string[]
): Promise<CliResult> {
  return runPlatform({ env: { DATABASE_URL: databaseUrl }, input }, ...args);
}

/**
 * The only place that reads `process.env`, and the signing-secret file.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** src/config/ or dist/config/ → src or dist → apps/webhook-inspector → apps → the repository root. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');

export const DEFAULT_SECRET_FILE = path.join(REPO_ROOT, 'data', 'webhook-inspector.secret');

export interface InspectorConfig {
  host: string;
  port: number;
  /** Absolute path of the file holding the signing secret(s), one `whsec_…` per line. */
  secretFile: string;
  /** The mail catcher's SMTP port on `host` (`MAIL_CATCHER_PORT`, default 1025); null: `off`. */
  mailPort: number | null;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: Record<string, string | undefined> = process.env): InspectorConfig {
  // Empty strings mean "unset", as in most .env tooling.
  const value = (name: string): string | undefined => env[name]?.trim() || undefined;

  const rawPort = value('INSPECTOR_PORT');
  const port = rawPort === undefined ? 3001 : Number(rawPort);
  if (!/^\d+$/.test(rawPort ?? '0') || !Number.isInteger(port) || port > 65535) {
    throw new ConfigError(
      `INSPECTOR_PORT must be a port number from 0 to 65535, got ${JSON.stringify(rawPort)}`,
    );
  }
  const secretFile = value('INSPECTOR_SECRET_FILE');
  const rawMail = value('MAIL_CATCHER_PORT');
  const mailPort = rawMail === undefined ? 1025 : rawMail === 'off' ? null : Number(rawMail);
  if (mailPort !== null && (!/^\d+$/.test(rawMail ?? '0') || mailPort > 65535)) {
    throw new ConfigError(
      `MAIL_CATCHER_PORT must be a port number from 0 to 65535 or off, got ${JSON.stringify(rawMail)}`,
    );
  }
  return {
    host: value('INSPECTOR_HOST') ?? '127.0.0.1',
    port,
    secretFile: secretFile ? path.resolve(secretFile) : DEFAULT_SECRET_FILE,
    mailPort,
  };
}

/** The secrets could not be read; the message says why and what to do, for the page to show. */
export class SecretsUnavailableError extends Error {
  override name = 'SecretsUnavailableError';
}

/**
 * The secrets in `file`: one per line, surrounding blanks ignored, empty lines and `#` comments
 * skipped. Throws `SecretsUnavailableError` when the file is missing, unreadable or empty.
 */
export async function readSecretFile(file: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new SecretsUnavailableError(
        `The secret file ${file} is missing, so nothing can be verified. The API's pnpm dev ` +
          'bootstrap writes it when it registers this inspector as a webhook endpoint; or write ' +
          "the endpoint's signing secret (whsec_…) into it yourself, or point INSPECTOR_SECRET_FILE " +
          'at another file. It is re-read on every delivery: no restart needed.',
      );
    }
    throw new SecretsUnavailableError(
      `The secret file ${file} cannot be read (${(error as Error).message}).`,
    );
  }
  const secrets = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  if (secrets.length === 0) {
    throw new SecretsUnavailableError(
      `The secret file ${file} holds no secret: write the endpoint's signing secret (whsec_…) ` +
        'into it, one per line (two during a rotation).',
    );
  }
  return secrets;
}

import { hash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type AppConfig, ConfigError } from '../config/env';

/**
 * The server's few cryptographic helpers, in one place that imports nothing of the features
 * using them (auth, oauth, webhooks), so none of those folders needs another for a hash or a key.
 */

/**
 * SHA-256 of a bearer secret (personal tokens, OAuth codes and tokens, client secrets), in hex:
 * only this is stored, and lookups go by it, so a database dump holds no usable credential.
 */
export function hashToken(token: string): string {
  // One-shot: no Hash object per call (every authenticated request hashes its token).
  return hash('sha256', token, 'hex');
}

/** Equal strings, compared in constant time (a length mismatch answers false at once). */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A 32-byte key for one purpose (`info`) derived from a master secret (HKDF-SHA-256), base64url. */
export function deriveKey(secret: Buffer, info: string): string {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), info, 32)).toString('base64url');
}

/**
 * The master secret: `WEBHOOK_SECRETS_KEY`, or on SQLite a key file beside the database (made
 * once, mode 0600), so the embedded default needs no set-up. PostgreSQL deployments must
 * configure the key: several instances share the database and must share the key, which no
 * local file can promise. Webhook signing secrets are sealed with it; the OAuth cookie keys are
 * derived from it.
 */
export function resolveSecretsKey(config: AppConfig): Buffer {
  if (config.webhooks.secretsKey) return config.webhooks.secretsKey;
  if (config.database.type === 'postgres') {
    throw new ConfigError(
      'WEBHOOK_SECRETS_KEY is required with PostgreSQL: set it to 32 random bytes, base64-encoded (e.g. `openssl rand -base64 32`), the same on every instance.',
    );
  }
  const file = path.join(path.dirname(config.database.path), 'webhook-secrets.key');
  try {
    writeKeyFileOnce(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new ConfigError(`${file} does not hold a 32-byte base64 key`);
  return key;
}

function writeKeyFileOnce(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  // `wx` fails if the file exists, so the server and the CLI never overwrite each other's key.
  writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
}

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { type AppConfig, ConfigError } from '../config/env';

const VERSION = 'v1';

/**
 * Encrypts webhook signing secrets at rest with AES-256-GCM. A signing secret cannot be hashed
 * like a token (we need it to sign), so a database dump alone must not reveal it. The record id
 * is bound in as associated data, so a sealed secret copied onto another row does not open.
 * Node's crypto is the library for this; the format is ours: `v1:<iv>:<tag>:<ciphertext>`.
 */
@Injectable()
export class SecretBox {
  private readonly key: Buffer;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.key = resolveSecretsKey(config);
  }

  seal(plaintext: string, recordId: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(recordId));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), ciphertext]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64')))
      .join(':');
  }

  open(sealed: string, recordId: string): string {
    const [version, iv, tag, ciphertext] = sealed.split(':');
    if (version !== VERSION || !iv || !tag || ciphertext === undefined) {
      throw new Error(`Sealed secret of ${recordId} has an unknown format`);
    }
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAAD(Buffer.from(recordId));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([
      decipher.update(Buffer.from(ciphertext, 'base64')),
      decipher.final(),
    ]).toString('utf8');
  }
}

/**
 * `WEBHOOK_SECRETS_KEY`, or on SQLite a key file beside the database (made once, mode 0600), so
 * the embedded default needs no set-up. PostgreSQL deployments must configure the key: several
 * instances share the database and must share the key, which no local file can promise.
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

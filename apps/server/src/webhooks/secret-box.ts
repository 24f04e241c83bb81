import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { resolveSecretsKey } from '../security/crypto';

// The key helper lives with the other crypto helpers (OAuth derives its cookie keys from it too).
export { resolveSecretsKey };

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

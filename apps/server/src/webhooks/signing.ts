import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new signing secret: `whsec_` + base64 of 32 random bytes, as Standard Webhooks defines. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Signs with the `standardwebhooks` reference library. Instances are cached per secret because
 * the library decodes the key in its constructor; the cache holds only live secrets' instances.
 */
export class Signer {
  private readonly cache = new Map<string, Webhook>();

  /** `webhook-signature`: one `v1,<sig>` per secret, space-separated (two during a rotation). */
  sign(secrets: readonly string[], messageId: string, at: Date, body: string): string {
    return secrets.map((secret) => this.webhook(secret).sign(messageId, at, body)).join(' ');
  }

  private webhook(secret: string): Webhook {
    let webhook = this.cache.get(secret);
    if (!webhook) {
      if (this.cache.size >= 1000) this.cache.clear();
      webhook = new Webhook(secret);
      this.cache.set(secret, webhook);
    }
    return webhook;
  }
}

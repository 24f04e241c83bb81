import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../config/env';
import { resolveSecretsKey, SecretBox } from './secret-box';

function sqliteConfig(dir: string) {
  return loadConfig({ DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}` });
}

describe('SecretBox', () => {
  const box = new SecretBox(
    loadConfig({ WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 1).toString('base64') }),
  );

  it('opens what it sealed, and the sealed text does not contain the secret', () => {
    const sealed = box.seal('whsec_c2VjcmV0', 'whe_1');
    expect(sealed).not.toContain('c2VjcmV0');
    expect(box.open(sealed, 'whe_1')).toBe('whsec_c2VjcmV0');
    // A fresh IV each time: the same secret never seals to the same text.
    expect(box.seal('whsec_c2VjcmV0', 'whe_1')).not.toBe(sealed);
  });

  it('refuses a sealed secret moved to another record, tampered with, or under another key', () => {
    const sealed = box.seal('whsec_c2VjcmV0', 'whe_1');
    expect(() => box.open(sealed, 'whe_2')).toThrow();
    const [v, iv, tag, ct] = sealed.split(':');
    const flipped = Buffer.from(ct!, 'base64');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => box.open([v, iv, tag, flipped.toString('base64')].join(':'), 'whe_1')).toThrow();
    const other = new SecretBox(
      loadConfig({ WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 2).toString('base64') }),
    );
    expect(() => other.open(sealed, 'whe_1')).toThrow();
  });
});

describe('resolveSecretsKey', () => {
  it('on SQLite without a key, makes one key file beside the database and keeps using it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'secret-box-'));
    const first = resolveSecretsKey(sqliteConfig(dir));
    const second = resolveSecretsKey(sqliteConfig(dir));
    expect(first).toHaveLength(32);
    expect(second.equals(first)).toBe(true);
    const file = path.join(dir, 'webhook-secrets.key');
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64').equals(first)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('on PostgreSQL, requires WEBHOOK_SECRETS_KEY and says how to make one', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://u:p@localhost/db' });
    expect(() => resolveSecretsKey(config)).toThrow(ConfigError);
    expect(() => resolveSecretsKey(config)).toThrow(/WEBHOOK_SECRETS_KEY.*openssl rand -base64 32/);
  });

  it('refuses a key that is not 32 bytes, naming the variable', () => {
    expect(() => loadConfig({ WEBHOOK_SECRETS_KEY: 'c2hvcnQ=' })).toThrow(
      /WEBHOOK_SECRETS_KEY: must be 32 bytes, base64-encoded/,
    );
  });
});

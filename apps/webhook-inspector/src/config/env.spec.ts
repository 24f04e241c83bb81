import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ConfigError,
  DEFAULT_SECRET_FILE,
  loadConfig,
  readSecretFile,
  REPO_ROOT,
  SecretsUnavailableError,
} from './env';

describe('loadConfig', () => {
  it('defaults to 127.0.0.1:3001 and data/webhook-inspector.secret at the repository root', () => {
    expect(loadConfig({})).toEqual({
      host: '127.0.0.1',
      port: 3001,
      secretFile: path.join(REPO_ROOT, 'data', 'webhook-inspector.secret'),
      mailPort: 1025,
    });
    expect(DEFAULT_SECRET_FILE).toBe(path.join(REPO_ROOT, 'data', 'webhook-inspector.secret'));
    // The repository root is the one holding pnpm-workspace.yaml.
    expect(existsSync(path.join(REPO_ROOT, 'pnpm-workspace.yaml'))).toBe(true);
  });

  it('reads INSPECTOR_HOST, INSPECTOR_PORT and INSPECTOR_SECRET_FILE; empty means unset', () => {
    expect(
      loadConfig({
        INSPECTOR_HOST: '0.0.0.0',
        INSPECTOR_PORT: '4001',
        INSPECTOR_SECRET_FILE: '/tmp/some.secret',
      }),
    ).toEqual({ host: '0.0.0.0', port: 4001, secretFile: '/tmp/some.secret', mailPort: 1025 });
    expect(loadConfig({ INSPECTOR_HOST: '', INSPECTOR_PORT: '' })).toMatchObject({
      host: '127.0.0.1',
      port: 3001,
    });
    expect(loadConfig({ INSPECTOR_PORT: '0' }).port).toBe(0);
  });

  it.each([{ port: 'abc' }, { port: '-1' }, { port: '65536' }, { port: '3.5' }])(
    'refuses INSPECTOR_PORT=$port',
    ({ port }) => {
      expect(() => loadConfig({ INSPECTOR_PORT: port })).toThrow(ConfigError);
      expect(() => loadConfig({ INSPECTOR_PORT: port })).toThrow(/INSPECTOR_PORT/);
    },
  );
});

describe('MAIL_CATCHER_PORT', () => {
  it('takes a port, or off for no mail catcher', () => {
    expect(loadConfig({ MAIL_CATCHER_PORT: '2525' }).mailPort).toBe(2525);
    expect(loadConfig({ MAIL_CATCHER_PORT: 'off' }).mailPort).toBeNull();
  });

  it.each(['abc', '-1', '65536'])('refuses MAIL_CATCHER_PORT=%s', (port) => {
    expect(() => loadConfig({ MAIL_CATCHER_PORT: port })).toThrow(/MAIL_CATCHER_PORT/);
  });
});

describe('readSecretFile', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'webhook-inspector-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('returns one secret per line, skipping blanks and # comments', async () => {
    const file = path.join(dir, 'secret');
    await writeFile(file, '# endpoint we_123\r\nwhsec_bmV3\n\n  whsec_b2xk  \n');
    expect(await readSecretFile(file)).toEqual(['whsec_bmV3', 'whsec_b2xk']);
  });

  it('says the file is missing, and how to get one', async () => {
    const file = path.join(dir, 'missing.secret');
    const error = await readSecretFile(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretsUnavailableError);
    expect((error as Error).message).toContain(`The secret file ${file} is missing`);
    expect((error as Error).message).toContain('INSPECTOR_SECRET_FILE');
  });

  it('says the file is empty', async () => {
    const file = path.join(dir, 'empty.secret');
    await writeFile(file, '\n# nothing yet\n');
    await expect(readSecretFile(file)).rejects.toThrow(/holds no secret/);
  });
});

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');
const { SOURCES, checkVersions, syncVersions } = require('../src/versions');

const ROOT = path.resolve(__dirname, '../../..');

/** A copy of every file that states the version, laid out as in the repository. */
function fixture() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'release-versions-'));
  for (const { file } of SOURCES) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, file), path.join(dir, file));
  }
  return dir;
}

function edit(dir, file, change) {
  const target = path.join(dir, file);
  fs.writeFileSync(target, change(fs.readFileSync(target, 'utf8')));
}

function setPackageVersion(dir, file, version) {
  edit(dir, file, (text) => text.replace(/"version": "[^"]+"/, `"version": "${version}"`));
}

describe('the release version', () => {
  const dirs = [];
  const tmp = () => {
    const dir = fixture();
    dirs.push(dir);
    return dir;
  };
  afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

  it('is one version across the repository (server, contract, SDKs, their constants)', () => {
    const { version, versions, errors } = checkVersions(ROOT);
    expect(errors).toEqual([]);
    expect(versions.map((v) => v.file)).toEqual(
      expect.arrayContaining([
        'apps/server/package.json',
        'packages/contract/package.json',
        'packages/client/package.json',
        'packages/client-php/package.json',
        'packages/client-python/package.json',
        'packages/platform-sync/package.json',
        'packages/platform-listen/package.json',
        'packages/client/src/version.ts',
        'packages/client-php/src/PlatformClient.php',
        'packages/client-python/src/platform_api/_version.py',
      ]),
    );
    expect(versions.every((v) => v.version === version)).toBe(true);
  });

  it.each(SOURCES.filter((s) => s.write).map((s) => s.file))(
    'fails naming %s when it alone says another version',
    (file) => {
      const dir = tmp();
      const version = checkVersions(dir).version;
      edit(dir, file, (text) => SOURCES.find((s) => s.file === file).write(text, '9.9.9'));
      const { errors } = checkVersions(dir);
      expect(errors).toEqual([expect.stringContaining(`${file}: `)]);
      expect(errors[0]).toContain(`is 9.9.9, but packages/contract/package.json says ${version}`);
    },
  );

  it.each(['apps/server/package.json', 'packages/client-python/package.json'])(
    'fails when the package %s was bumped alone',
    (file) => {
      const dir = tmp();
      setPackageVersion(dir, file, '0.9.0');
      expect(checkVersions(dir).errors).toEqual([expect.stringContaining(`${file}: `)]);
    },
  );

  it('fails when pyproject.toml states a version of its own instead of reading _version.py', () => {
    const dir = tmp();
    const file = 'packages/client-python/pyproject.toml';
    edit(dir, file, (text) => text.replace('dynamic = ["version"]', 'version = "0.1.0"'));
    expect(checkVersions(dir).errors).toEqual([
      expect.stringContaining(`${file}: a static [project] version`),
    ]);
  });

  it('is carried from the bumped package.json files into every constant by the sync', () => {
    const dir = tmp();
    for (const source of SOURCES.filter((s) => s.file.endsWith('/package.json'))) {
      setPackageVersion(dir, source.file, '1.2.0-rc.1');
    }
    expect(checkVersions(dir).errors).toHaveLength(6);
    const changed = syncVersions(dir, '1.2.0-rc.1');
    expect(changed).toHaveLength(6);
    expect(checkVersions(dir)).toMatchObject({ version: '1.2.0-rc.1', errors: [] });
    // Only the version moved: the OpenAPI document is otherwise byte for byte what was generated.
    const before = fs.readFileSync(path.join(ROOT, 'packages/contract/openapi.json'), 'utf8');
    const after = fs.readFileSync(path.join(dir, 'packages/contract/openapi.json'), 'utf8');
    expect(after.replace('"version": "1.2.0-rc.1"', '')).toBe(
      before.replace(`"version": "${checkVersions(ROOT).version}"`, ''),
    );
  });

  it('refuses to write something that is not a version', () => {
    expect(() => syncVersions(tmp(), '1.2')).toThrow('"1.2" is not a semantic version');
  });

  it('the CI check exits non-zero and names the file on a mismatch', () => {
    const check = path.join(__dirname, '..', 'bin', 'check-versions.js');
    expect(execFileSync(process.execPath, [check], { encoding: 'utf8' })).toMatch(
      /^check-versions: 13 places all say \d+\.\d+\.\d+/,
    );
    const dir = tmp();
    edit(dir, 'packages/client/src/version.ts', (text) =>
      text.replace(/VERSION = '[^']+'/, "VERSION = '0.0.9'"),
    );
    const run = spawnSync(process.execPath, [check, dir], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('packages/client/src/version.ts: ');
  });
});

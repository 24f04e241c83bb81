const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { countJUnit } = require('@platform/sdk-live');
const {
  ProofInputError,
  findArtefacts,
  junitXml,
  table,
  typescriptSpec,
} = require('../src/install-proof');

const ROOT = path.resolve(__dirname, '../../..');

/** A release folder with a manifest listing `files` (the files themselves are not needed). */
function releaseWith(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'release-proof-spec-'));
  const artefacts = files.map((file) => ({ file, kind: 'x', package: 'x', bytes: 1, sha256: 'x' }));
  fs.writeFileSync(
    path.join(dir, 'manifest.json'),
    JSON.stringify({ version: '9.8.7', artefacts }),
  );
  return dir;
}

describe('pnpm release:proof', () => {
  const cases = [
    { consumer: 'npm', check: 'node ESM (`.`)', ms: 600, ok: true, note: 'ok npm' },
    { consumer: 'python', check: 'script in the venv', ms: 250, ok: true },
    {
      consumer: 'pnpm',
      check: 'install platform-client-9.8.7.tgz alone',
      ms: 1100,
      ok: false,
      detail:
        'Progress: resolved 0\n ERR_PNPM_FETCH_404  GET <registry>/@platform%2Fcontract & "more"',
    },
  ];

  it('reports one JUnit test case per consumer, which CI counts as passed or failed', () => {
    const xml = junitXml(cases, 2000);
    // The same reader that counts the PHP and Python live suites for CI's summary.
    expect(countJUnit(xml)).toEqual({ passed: 2, failed: 1, skipped: 0 });
    // The failure names the error line, not the progress line before it, escaped.
    expect(xml).toContain(
      'message="ERR_PNPM_FETCH_404  GET &lt;registry&gt;/@platform%2Fcontract &amp; &quot;more&quot;"',
    );
  });

  it('prints a table of what ran, with the error line of what failed', () => {
    const lines = table(cases).split('\n');
    expect(lines[0]).toMatch(/^result\s+consumer\s+check\s+time\s+detail$/);
    expect(lines[2]).toMatch(/^PASS\s+npm\s+node ESM \(`\.`\)\s+0\.6 s\s+ok npm$/);
    expect(lines[4]).toMatch(
      /^FAIL\s+pnpm\s+install platform-client-9\.8\.7\.tgz alone\s+1\.1 s\s+ERR_PNPM_FETCH_404/,
    );
  });

  it("finds the client tarball, the wheel and the PHP archive in the release's manifest", () => {
    const dir = releaseWith([
      'npm/platform-contract-9.8.7.tgz',
      'npm/platform-client-9.8.7.tgz',
      'python/platform_api-9.8.7-py3-none-any.whl',
      'python/platform_api-9.8.7.tar.gz',
      'php/platform-api-9.8.7.zip',
      'server/server-image-context-9.8.7.tar.gz',
    ]);
    expect(findArtefacts(dir)).toEqual({
      version: '9.8.7',
      clientTarball: path.join(dir, 'npm/platform-client-9.8.7.tgz'),
      wheel: path.join(dir, 'python/platform_api-9.8.7-py3-none-any.whl'),
      phpArchive: path.join(dir, 'php/platform-api-9.8.7.zip'),
    });
  });

  it('refuses a release folder without a manifest or with an artefact missing', () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'release-proof-spec-'));
    expect(() => findArtefacts(empty)).toThrow(ProofInputError);
    expect(() => findArtefacts(empty)).toThrow(/run `pnpm release --dry-run` first/);
    const noWheel = releaseWith(['npm/platform-client-9.8.7.tgz', 'php/platform-api-9.8.7.zip']);
    expect(() => findArtefacts(noWheel)).toThrow(/expected one Python wheel .* found 0/);
  });

  it("installs the workspace's own TypeScript range into the consumer projects", () => {
    expect(typescriptSpec(ROOT)).toMatch(/^typescript@[~^]?\d+\.\d+\.\d+$/);
  });
});

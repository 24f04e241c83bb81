/**
 * `pnpm gen resource <name>` (tooling/generators): in a fresh clone of HEAD, the generated resource
 * builds and passes its own e2e test, the contract walk and the field checks before any hand edit.
 * The SDKs are not regenerated here (PLATFORM_GEN_SKIP_SDKS): what is checked is the code the
 * generator writes and registers, not the codegen it then runs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const REPO = path.join(__dirname, '..', '..', '..');

interface JestReport {
  numFailedTests: number;
  numPassedTests: number;
  testResults: { name: string; assertionResults: { status: string; fullName: string }[] }[];
}

describe('pnpm gen resource', () => {
  let copy: string;

  beforeAll(() => {
    copy = path.join(mkdtempSync(path.join(tmpdir(), 'platform-gen-')), 'repo');
  });
  afterAll(() => rmSync(path.dirname(copy), { recursive: true, force: true }));

  /** Runs a command in the copy with this Node first on PATH; throws with its output on failure. */
  function run(cwd: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('JEST_')),
    );
    try {
      return execFileSync(command, args, {
        cwd,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...clean,
          PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
          ...env,
        },
        maxBuffer: 64 * 1024 * 1024,
      });
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string; message: string };
      throw new Error(`${command} ${args.join(' ')} failed:\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
    }
  }

  it('writes a resource that builds and passes its e2e test, the contract walk and the field checks', () => {
    run(REPO, 'git', ['clone', '--quiet', '--shared', REPO, copy]);
    run(copy, 'pnpm', ['install', '--offline', '--frozen-lockfile', '--reporter=silent']);
    run(copy, 'pnpm', ['gen', 'resource', 'widgets', 'wdg'], { PLATFORM_GEN_SKIP_SDKS: '1' });

    expect(existsSync(path.join(copy, 'apps/server/src/widgets/widgets.service.ts'))).toBe(true);
    expect(readFileSync(path.join(copy, 'packages/contract/src/registry.ts'), 'utf8')).toContain(
      "prefix: 'wdg',",
    );

    // It builds: the server's build settings type-check the server and the contract's source in
    // one program, declarations included (what `tsc -b` and tsup's dts step would report). The
    // suites below run from source, as Jest does here; only Jest's global setup and teardown load
    // the contract's CommonJS bundle, which tsup writes in seconds without its declarations.
    run(copy, 'pnpm', [
      '--filter',
      '@platform/contract',
      'exec',
      'tsup',
      '--format',
      'cjs',
      '--no-dts',
      '--no-sourcemap',
    ]);
    const server = path.join(copy, 'apps', 'server');
    writeFileSync(
      path.join(server, 'tsconfig.generated-check.json'),
      JSON.stringify({
        extends: './tsconfig.build.json',
        compilerOptions: {
          emitDeclarationOnly: true,
          declaration: true,
          noEmit: false,
          outDir: path.join(path.dirname(copy), 'declarations'),
          rootDir: '../..',
          tsBuildInfoFile: null,
          paths: { '@platform/contract': ['../../packages/contract/src/index.ts'] },
        },
      }),
    );
    run(server, process.execPath, [
      require.resolve('typescript/bin/tsc', { paths: [server] }),
      '-p',
      'tsconfig.generated-check.json',
    ]);

    const report = path.join(copy, 'jest-report.json');
    run(server, process.execPath, [
      require.resolve('jest/bin/jest', { paths: [server] }),
      '--ci',
      '--json',
      `--outputFile=${report}`,
      'test/widgets.e2e-spec.ts',
      'test/contract-walk.e2e-spec.ts',
      'src/common/list/contract-fields.spec.ts',
    ]);
    const results = JSON.parse(readFileSync(report, 'utf8')) as JestReport;
    expect(results.numFailedTests).toBe(0);
    const suites = Object.fromEntries(
      results.testResults.map((s) => [path.basename(s.name), s.assertionResults.length]),
    );
    expect(suites['widgets.e2e-spec.ts']).toBeGreaterThanOrEqual(3);
    expect(suites['contract-walk.e2e-spec.ts']).toBeGreaterThan(100);
    expect(suites['contract-fields.spec.ts']).toBeGreaterThan(0);
    // The walk covered the new routes (it fails for a collection without a fixture).
    const walked = results.testResults
      .flatMap((s) => s.assertionResults)
      .filter((a) => a.fullName.includes('/v1/widgets'));
    expect(walked.length).toBeGreaterThan(5);
    expect(walked.every((a) => a.status === 'passed')).toBe(true);
  }, 600_000);
});

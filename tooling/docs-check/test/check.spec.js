/**
 * Each check on a small repository made to break it: a check that cannot fail proves nothing.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  anchors,
  brokenLinks,
  decisionProblems,
  documentationFiles,
  missingPaths,
  missingScripts,
  overLimit,
  runBlock,
  runnableBlocks,
} = require('../src/check');

let root;

function write(file, text) {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  fs.writeFileSync(path.join(root, file), text);
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-check-'));
  write('bench/README.md', '# Benchmarks\n');
  write(
    'docs/guide.md',
    [
      '# Guide',
      '',
      '## The `q` parameter, in short',
      '',
      '## Setup',
      '',
      '## Setup',
      '',
      'Back to the [README](../README.md#top) and [ours](#setup-1).',
      '',
    ].join('\n'),
  );
  write('packages/lib/README.md', '# lib\n\n[missing](./gone.md)\n');
});

afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('line limits', () => {
  test('a README of 251 lines is over, one of 250 is not', () => {
    write('README.md', '# Top\n' + 'line\n'.repeat(249));
    expect(overLimit(root)).toEqual([]);
    write('README.md', '# Top\n' + 'line\n'.repeat(250));
    expect(overLimit(root)).toEqual(['README.md: 251 lines (limit 250)']);
  });

  test('bench/README.md over 300 lines is reported', () => {
    write('README.md', '# Top\n');
    write('bench/README.md', 'x\n'.repeat(301));
    expect(overLimit(root)).toEqual(['bench/README.md: 301 lines (limit 300)']);
  });
});

describe('links', () => {
  test('headings give GitHub anchors, repeated ones numbered', () => {
    write('README.md', '# Top\n');
    expect([...anchors(root, 'docs/guide.md')]).toEqual([
      'guide',
      'the-q-parameter-in-short',
      'setup',
      'setup-1',
    ]);
  });

  test('a missing file, a missing anchor and a path outside the repository are reported', () => {
    write(
      'README.md',
      [
        '# Top',
        '',
        '[guide](docs/guide.md#the-q-parameter-in-short) [web](https://example.test/x)',
        '[setup](docs/guide.md#setup-1) [self](#top) [dir](docs/) ![img](docs/guide.md)',
        '[gone](docs/nothing.md) [no heading](docs/guide.md#nowhere) [up](../../etc/passwd)',
        '[bad self](#bottom)',
        '',
        '| page | link |',
        '| ---- | ---- |',
        '| one  | [gone too](docs/missing.md) |',
        '',
      ].join('\n'),
    );
    expect(brokenLinks(root)).toEqual([
      'README.md:5 → docs/nothing.md (no such file)',
      'README.md:5 → docs/guide.md#nowhere (no such heading)',
      'README.md:5 → ../../etc/passwd (outside the repository)',
      'README.md:6 → #bottom (no such heading)',
      'README.md:10 → docs/missing.md (no such file)',
      'packages/lib/README.md:3 → ./gone.md (no such file)',
    ]);
  });

  test('the pages checked include docs/ at any depth and app and package READMEs', () => {
    write('README.md', '# Top\n');
    write('docs/decisions/0001-x.md', '# x\n');
    expect(documentationFiles(root)).toEqual([
      'README.md',
      'bench/README.md',
      'docs/decisions/0001-x.md',
      'docs/guide.md',
      'packages/lib/README.md',
    ]);
  });
});

describe('runnable commands', () => {
  beforeEach(() => {
    write(
      'README.md',
      [
        '# Top',
        '',
        '```sh runnable',
        'test -f README.md',
        'echo fine',
        '```',
        '',
        '```sh',
        'rm -rf / # never run: not marked',
        '```',
        '',
        '```sh runnable',
        'true | false | true',
        'echo "not reached"',
        '```',
        '',
        '```bash runnable',
        'exit 3',
        '```',
        '',
      ].join('\n'),
    );
  });

  test('only blocks marked runnable are collected', () => {
    expect(runnableBlocks(root).map((block) => block.line)).toEqual([3, 12, 17]);
  });

  test('a block succeeds only when every command in it does', () => {
    const [fine, pipe, exit] = runnableBlocks(root).map((block) => runBlock(root, block));
    expect(fine).toMatchObject({ status: 0, output: 'fine\n' });
    expect(pipe.status).not.toBe(0);
    expect(pipe.output).not.toContain('not reached');
    expect(exit.status).toBe(3);
  });
});

describe('file paths and pnpm scripts named in CONTRIBUTING.md and docs/', () => {
  beforeEach(() => {
    write('.gitignore', 'node_modules/\ndist/\n*.sqlite\n');
    write(
      'package.json',
      JSON.stringify({ name: 'top', scripts: { build: 'tsc', 'test:x': 'x' } }),
    );
    write(
      'packages/lib/package.json',
      JSON.stringify({ name: '@x/lib', scripts: { test: 'jest' } }),
    );
    write('apps/server/src/webhooks/sender.ts', '');
    write('apps/server/test/a.e2e-spec.ts', '');
    write('scripts/run.sh', '');
    write('node_modules/.bin/tool', '');
  });

  test('a path that exists passes, from the root, the page or a package source folder', () => {
    write(
      'CONTRIBUTING.md',
      [
        '# Contributing',
        '',
        'Run `scripts/run.sh`, read `webhooks/sender.ts` and `../scripts/run.sh` (from docs/).',
        '`cd apps/server && npx jest test/a.e2e-spec.ts`; `export U=$(scripts/run.sh start)`',
        '',
      ].join('\n'),
    );
    write('docs/more.md', '# More\n\nSee `../scripts/run.sh` and `guide.md` and `apps/server/`.\n');
    expect(missingPaths(root)).toEqual([]);
  });

  test('a missing path fails, in prose, after a cd, in a table and in a shell block', () => {
    write(
      'CONTRIBUTING.md',
      [
        '# Contributing',
        '',
        'Run `scripts/gone.sh` and read `webhooks/endpoint-owner.ts`.',
        '`cd apps/server && npx jest test/b.e2e-spec.ts`',
        '',
        '| what | command |',
        '| ---- | ------- |',
        '| one  | `packages/lib/src/index.ts` |',
        '',
        '```sh',
        'export U=$(scripts/missing.sh start)',
        '```',
        '',
      ].join('\n'),
    );
    expect(missingPaths(root)).toEqual([
      'CONTRIBUTING.md:3 → scripts/gone.sh',
      'CONTRIBUTING.md:3 → webhooks/endpoint-owner.ts',
      'CONTRIBUTING.md:4 → test/b.e2e-spec.ts',
      'CONTRIBUTING.md:8 → packages/lib/src/index.ts',
      'CONTRIBUTING.md:11 → scripts/missing.sh',
    ]);
  });

  test("placeholders, ignored build output and other projects' paths are skipped", () => {
    write(
      'docs/more.md',
      [
        '# More',
        '',
        '`apps/server/src/<name>/<name>.schema.ts`, `docs/decisions/NNNN-title.md`, `bench/*.js`,',
        '`apps/server/src/{app.module,schema}.ts`, `dist/main.js`, `data/platform.sqlite`,',
        '`apps/server/dist/main.js`, `vendor/autoload.php`, `https://example.test/a/b.js`.',
        '',
      ].join('\n'),
    );
    expect(missingPaths(root)).toEqual([]);
  });

  test('a pnpm script passes only when the package it runs in has it', () => {
    write(
      'CONTRIBUTING.md',
      [
        '# Contributing',
        '',
        '`pnpm build`, `pnpm run test:x`, `pnpm --filter @x/lib test`, `pnpm -F @x/lib run test`,',
        '`pnpm install`, `pnpm exec tsc`, `pnpm tool seed`, `pnpm --filter @x/lib... build`.',
        '',
        '`pnpm bild`, `pnpm --filter @x/lib lint`, `X=… pnpm --filter=@x/nope test`.',
        '',
        '```sh',
        'cd packages/lib && pnpm test',
        'cd packages/lib && pnpm build',
        '```',
        '',
      ].join('\n'),
    );
    expect(missingScripts(root)).toEqual([
      'CONTRIBUTING.md:6 → pnpm bild (no script bild in ./package.json)',
      'CONTRIBUTING.md:6 → pnpm --filter @x/lib lint (no script lint in packages/lib/package.json)',
      'CONTRIBUTING.md:6 → pnpm --filter=@x/nope test (no package @x/nope)',
      'CONTRIBUTING.md:9 → pnpm build (no script build in packages/lib/package.json)',
    ]);
  });
});

describe('decision records', () => {
  test('numbered 1, 2, 3 with their own number in the title and listed in the index', () => {
    write('docs/decisions/0001-a.md', '# 1. A\n');
    write('docs/decisions/0002-b.md', '# 2. B\n');
    write('docs/decisions/README.md', '[A](0001-a.md) [B](0002-b.md)\n');
    expect(decisionProblems(root)).toEqual([]);
  });

  test('a gap, a wrong title and a record missing from the index are reported', () => {
    write('docs/decisions/0001-a.md', '# 1. A\n');
    write('docs/decisions/0003-c.md', '# 2. C\n');
    write('docs/decisions/README.md', '[A](0001-a.md)\n');
    expect(decisionProblems(root)).toEqual([
      'docs/decisions/0003-c.md: numbered 3, expected 2',
      'docs/decisions/0003-c.md: its title "# 2. C" does not start with "# 3. "',
      'docs/decisions/0003-c.md: not in docs/decisions/README.md',
    ]);
  });
});

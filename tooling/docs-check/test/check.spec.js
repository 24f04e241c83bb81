/**
 * Each check on a small repository made to break it: a check that cannot fail proves nothing.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  anchors,
  brokenLinks,
  documentationFiles,
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

/**
 * The repository's documentation as a reader meets it: short entry pages, links that lead
 * somewhere, and the commands marked runnable working in this checkout (CI: a fresh clone).
 */
const fs = require('node:fs');
const path = require('node:path');
const {
  brokenLinks,
  decisionProblems,
  documentationFiles,
  lineCount,
  missingPaths,
  missingScripts,
  overLimit,
  runBlock,
  runnableBlocks,
} = require('../src/check');

const ROOT = path.join(__dirname, '..', '..', '..');

describe('the documentation of this repository', () => {
  test('README.md has at most 250 lines and bench/README.md at most 300', () => {
    expect(overLimit(ROOT)).toEqual([]);
    expect(lineCount(ROOT, 'README.md')).toBeLessThanOrEqual(250);
    expect(lineCount(ROOT, 'bench/README.md')).toBeLessThanOrEqual(300);
  });

  test('covers the entry pages, docs/, the benchmarks and every app and package README', () => {
    const files = documentationFiles(ROOT);
    for (const file of [
      'README.md',
      'CONTRIBUTING.md',
      'bench/README.md',
      'docs/configuration.md',
      'docs/operations.md',
      'docs/security.md',
      'docs/api-guide.md',
      'docs/clients.md',
      'docs/releasing.md',
      'packages/client/README.md',
      'apps/portal/README.md',
    ]) {
      expect(files).toContain(file);
    }
    expect(files.filter((file) => file.startsWith('docs/decisions/')).length).toBeGreaterThan(1);
  });

  test('every relative link and #anchor resolves', () => {
    expect(brokenLinks(ROOT)).toEqual([]);
  });

  test('every file path CONTRIBUTING.md and docs/ name in backticks exists', () => {
    expect(missingPaths(ROOT)).toEqual([]);
  });

  test('every `pnpm <script>` and `pnpm --filter <package> <script>` there has its script', () => {
    expect(missingScripts(ROOT)).toEqual([]);
  });

  test('decision records are numbered in order, each titled with its number and indexed', () => {
    expect(decisionProblems(ROOT)).toEqual([]);
  });

  test('docs/configuration.md names every variable the server reads', () => {
    // The one environment reader: each variable is a key of its zod schema.
    const env = fs.readFileSync(path.join(ROOT, 'apps/server/src/config/env.ts'), 'utf8');
    const variables = [...env.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((match) => match[1]);
    expect(variables).toContain('DATABASE_URL');
    const page = fs.readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
    expect(variables.filter((name) => !page.includes(`| \`${name}\``))).toEqual([]);
  });

  const blocks = runnableBlocks(ROOT);

  test('some commands are marked runnable', () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  test.each(blocks.map((block) => [`${block.file}:${block.line}`, block]))(
    'the runnable block at %s succeeds',
    (_where, block) => {
      const result = runBlock(ROOT, block);
      if (result.status !== 0) {
        throw new Error(
          `exit ${result.status ?? result.signal} from:\n${block.code}\n--- output ---\n${result.output}`,
        );
      }
    },
  );
});

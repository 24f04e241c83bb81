/**
 * The repository's code as it stands: no file or function over its limit unless allowlisted, no
 * allowlisted entry that has since been split or removed, and no import cycle in the server.
 */
const path = require('node:path');
const {
  FILE_LIMIT,
  FUNCTION_LIMIT,
  compare,
  cycles,
  describeShape,
  importGraph,
  measure,
  readAllowlist,
} = require('../src/check');

const ROOT = path.join(__dirname, '..', '..', '..');
const ALLOWLIST = path.join(__dirname, '..', 'allowlist.json');

it(`has no file over ${FILE_LIMIT} lines or function over ${FUNCTION_LIMIT} lines beyond the allowlist, which only shrinks`, () => {
  const over = measure(ROOT);
  const result = compare(over, readAllowlist(ALLOWLIST));
  const report = describeShape(result, over);
  expect(report).toBe('');
});

it('has no import cycle among the files of apps/server/src', () => {
  const found = cycles(importGraph(ROOT, 'apps/server/src')).map((cycle) => cycle.join(' → '));
  expect(found).toEqual([]);
});

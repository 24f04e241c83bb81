#!/usr/bin/env node
// `pnpm generate:sdks` writes the PHP and Python clients' generated files and the API
// reference from packages/contract/openapi.json; `--check` only reports what would change.
import { drift, loadModel, render, write } from './generate';

const check = process.argv.includes('--check');
const files = render(loadModel());
const result = check ? drift(files) : write(files);
const touched = [...result.changed, ...result.stale.map((file) => `${file} (stale)`)];
if (check && touched.length > 0) {
  console.error(
    `Generated files are out of date with the contract:\n  ${touched.join('\n  ')}\n` +
      'Run `pnpm generate:sdks` and commit the result.',
  );
  process.exitCode = 1;
} else {
  console.log(
    check
      ? `${files.size} generated files match the contract.`
      : `${files.size} generated files; ${touched.length} written or removed.`,
  );
}

#!/usr/bin/env node
// `pnpm generate:sdks` writes the TypeScript, PHP and Python clients' generated files, the API
// reference and its code samples, and packages/contract/openapi.json, from the built contract
// (dist/openapi.js). `--check` only reports what would change, reading the committed
// openapi.json instead.
import { drift, loadModel, render, renderFromContract, write } from './generate';

const check = process.argv.includes('--check');
const files = check ? render(loadModel()) : renderFromContract();
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

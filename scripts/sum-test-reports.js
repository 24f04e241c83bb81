// Adds up the per-run reports written by tooling/jest/summary-reporter.js and prints one line
// "N passed, N failed" for CI, after a breakdown by package and database.
const fs = require('node:fs');
const path = require('node:path');

const dir = process.argv[2];
if (!dir || !fs.existsSync(dir)) {
  console.log('0 passed, 0 failed');
  process.exit(0);
}
let passed = 0;
let failed = 0;
for (const file of fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort()) {
  const report = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  const broken = report.brokenSuites ?? 0;
  passed += report.passed;
  failed += report.failed + broken;
  console.log(
    `  ${path.basename(report.package).padEnd(10)} ${report.database.padEnd(15)} ${report.passed} passed, ${report.failed} failed${broken ? `, ${broken} suites did not run` : ''}`,
  );
}
console.log(`${passed} passed, ${failed} failed`);

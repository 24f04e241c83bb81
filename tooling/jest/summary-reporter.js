// Writes this run's passed/failed counts to $PLATFORM_TEST_REPORT_DIR so that .ci/run can
// print one "N passed, N failed" line summed over every package and database.
const fs = require('node:fs');
const path = require('node:path');

class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    const dir = process.env.PLATFORM_TEST_REPORT_DIR;
    if (!dir) return;
    fs.mkdirSync(dir, { recursive: true });
    const name = `${path.basename(this.rootDir)}-${process.pid}-${Date.now()}.json`;
    fs.writeFileSync(
      path.join(dir, name),
      JSON.stringify({
        package: this.rootDir,
        database:
          (process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite') +
          (process.env.TEST_REDIS_URL ? '+redis' : ''),
        passed: results.numPassedTests,
        failed: results.numFailedTests,
        // A suite that crashed before running its tests has no failed test; count it as a failure.
        brokenSuites: results.numRuntimeErrorTestSuites ?? 0,
      }),
    );
  }
}

module.exports = SummaryReporter;

// Prints the ten slowest test files of a Jest run (wall time of each file, as Jest measured it),
// so that a slow file is noticed where it was added. .ci/run's step table says which run took
// the time; this says which files inside it.
const path = require('node:path');

const SHOWN = 10;

class SlowestReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.files = [];
  }

  onTestResult(_test, result) {
    const { start, end } = result.perfStats;
    if (start && end) this.files.push({ file: result.testFilePath, ms: end - start });
  }

  onRunComplete() {
    if (this.files.length < 2) return;
    const slowest = [...this.files].sort((a, b) => b.ms - a.ms).slice(0, SHOWN);
    const total = this.files.reduce((sum, f) => sum + f.ms, 0);
    const lines = slowest.map(
      (f) =>
        `  ${(f.ms / 1000).toFixed(1).padStart(6)} s  ${path.relative(this.rootDir, f.file) || f.file}`,
    );
    process.stderr.write(
      `\nslowest test files of ${path.basename(this.rootDir)} ` +
        `(${this.files.length} files, ${(total / 1000).toFixed(0)} s summed over workers):\n` +
        `${lines.join('\n')}\n`,
    );
  }
}

module.exports = SlowestReporter;

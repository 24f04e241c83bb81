'use strict';
// Jest globalTeardown: anything refused that no test's afterEach reported (a delivery that
// fired after its test ended, a child process) fails the run here.
const { LOG_DIR_ENV, violationsIn, describeViolations } = require('./index');

module.exports = async function hermeticGlobalTeardown() {
  const dir = process.env[LOG_DIR_ENV];
  if (!dir) return;
  const entries = violationsIn(dir);
  if (entries.length > 0) {
    throw new Error(
      `hermetic: this test run tried to reach outside loopback:\n${describeViolations(entries)}`,
    );
  }
};

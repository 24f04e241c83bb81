'use strict';
// Jest globalSetup: the guard in Jest's own process (tests run here with --runInBand) and, via
// NODE_OPTIONS, in every worker and every process a test starts. Jest's globalTeardown and the
// per-test hooks read the log; the process-exit check would come too late to fail the run.
module.exports = async function hermeticGlobalSetup() {
  require('./index').enforceForRun({ exitCheck: false });
};

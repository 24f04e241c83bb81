'use strict';
// Jest setupFilesAfterEnv: a test during which anything (the code under test, a child process,
// a background dispatcher) tried to reach outside loopback fails, even if the refused
// connection's error was caught and swallowed. A test that expects a refusal takes it with
// `takeViolations()` first.
const { takeViolations, describeViolations } = require('./index');

function check(when) {
  const entries = takeViolations();
  if (entries.length > 0) {
    throw new Error(
      `hermetic: ${when} tried to reach outside loopback (tests may only connect to loopback; ` +
        `use a *.test host name or a loopback receiver):\n${describeViolations(entries)}`,
    );
  }
}

afterEach(() => check('this test'));
afterAll(() => check("this file's set-up or tear-down"));

#!/usr/bin/env node
'use strict';
// Loopback only for the harness, the server it starts and every Node child (tooling/hermetic);
// the run fails if anything tried to reach further.
require('@platform/hermetic').enforceForRun();
const { main } = require('../src/cli');

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`platform-sdk-live: ${error.stack ?? error}\n`);
    process.exit(1);
  },
);

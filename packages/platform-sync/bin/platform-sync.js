#!/usr/bin/env node
'use strict';
require('../dist/index.js')
  .main(process.argv.slice(2), process.env)
  .then((code) => {
    process.exitCode = code;
  })
  .catch((error) => {
    process.stderr.write(`platform-sync: ${error && error.stack ? error.stack : error}\n`);
    process.exitCode = 4;
  });

#!/usr/bin/env node
'use strict';
require('../src/run')
  .main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  });

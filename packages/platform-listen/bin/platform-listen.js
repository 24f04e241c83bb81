#!/usr/bin/env node
// `npx @platform/listen`: the SDK's own `platform-listen` (@platform/client, released with this
// package at the same version), so the command is written and tested once.
'use strict';
const path = require('node:path');

require(
  path.join(
    path.dirname(require.resolve('@platform/client/package.json')),
    'bin',
    'platform-listen.js',
  ),
);

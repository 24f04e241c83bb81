#!/usr/bin/env node
// After `changeset version` bumped the fixed group's package.json files: carry the version into
// the SDK constants and the OpenAPI document, then check every place agrees.
'use strict';
const path = require('node:path');
const { checkVersions, groupVersion, syncVersions } = require('../src/versions');
const root = path.resolve(__dirname, '../../..');
const version = groupVersion(root);
const changed = syncVersions(root, version);
console.log(
  `sync-versions: ${version}${changed.length ? ` written to ${changed.join(', ')}` : ', nothing to write'}`,
);
const { errors } = checkVersions(root);
if (errors.length > 0) {
  console.error(`sync-versions: still disagreeing:\n  ${errors.join('\n  ')}`);
  process.exit(1);
}

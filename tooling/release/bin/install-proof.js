#!/usr/bin/env node
// pnpm release:proof [--release DIR] [--junit FILE] [--only npm,pnpm,yarn,bun,deno,python,php] [--keep]
// Installs release/<version>/'s artefacts outside the workspace and runs each client against a
// live server on loopback: see docs/releasing.md and ../src/install-proof.js.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { installProof, ProofInputError } = require('../src/install-proof');

const USAGE =
  'usage: pnpm release:proof [--release DIR] [--junit FILE] [--only npm,pnpm,yarn,bun,deno,python,php] [--keep]';
const CONSUMERS = ['npm', 'pnpm', 'yarn', 'bun', 'deno', 'python', 'php'];
const root = path.resolve(__dirname, '../../..');

let values;
try {
  ({ values } = parseArgs({
    options: {
      release: { type: 'string' },
      junit: { type: 'string' },
      only: { type: 'string' },
      keep: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  console.error(`release:proof: ${error.message}\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const only = values.only?.split(',').map((s) => s.trim());
const unknown = only?.filter((name) => !CONSUMERS.includes(name)) ?? [];
if (unknown.length > 0) {
  console.error(
    `release:proof: unknown consumer(s) ${unknown.join(', ')}; known: ${CONSUMERS.join(', ')}`,
  );
  process.exit(2);
}

/** Without --release: release/<version>/ of the workspace's version, where `pnpm release` writes. */
function defaultReleaseDir() {
  const version = JSON.parse(
    fs.readFileSync(path.join(root, 'packages/client/package.json'), 'utf8'),
  ).version;
  return path.join(root, 'release', version);
}

installProof({
  root,
  releaseDir: path.resolve(values.release ?? defaultReleaseDir()),
  junit: values.junit,
  keep: values.keep,
  only,
}).then(
  // Exiting here: the hermetic guard's exit check still runs and fails the run if anything
  // tried to reach outside loopback.
  ({ exitCode }) => process.exit(exitCode),
  (error) => {
    console.error(
      `release:proof: ${error instanceof ProofInputError ? error.message : (error.stack ?? error)}`,
    );
    // A proof that could not start (no release folder, say) counts in CI's summary as a broken
    // suite, not as nothing.
    if (process.env.PLATFORM_TEST_REPORT_DIR) {
      const { databaseLabel, writeReport } = require('@platform/sdk-live');
      writeReport(
        {
          package: 'release-proof',
          database: databaseLabel(),
          passed: 0,
          failed: 0,
          brokenSuites: 1,
        },
        process.env.PLATFORM_TEST_REPORT_DIR,
      );
    }
    process.exit(1);
  },
);

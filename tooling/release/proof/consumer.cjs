'use strict';
// The CommonJS consumer: loads @platform/client through its `require` entry.
const sdk = require('@platform/client');
const { run } = require('./checks.cjs');

const webhooks = process.env.PROOF_WEBHOOKS_ENTRY ? require('@platform/client/webhooks') : null;
run(sdk, process.env.PROOF_LABEL ?? 'cjs', webhooks).catch((error) => {
  console.error(error);
  process.exit(1);
});

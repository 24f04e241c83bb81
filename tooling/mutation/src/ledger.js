// tooling/mutation/ledger.json: for each module, the hash of its inputs (src/inputs.js) and the
// score a from-scratch Stryker run measured on exactly those inputs. Committed: a clean clone
// (CI) rescores only the modules whose inputs changed since their entry was written.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { moduleHash } = require('./inputs');

const LEDGER = path.resolve(__dirname, '..', 'ledger.json');

/** @returns {Record<string, { hash: string, score: number, detected: number, mutants: number, minutes: number }>} */
function readLedger(file = LEDGER) {
  if (!fs.existsSync(file)) return {};
  return JSON.parse(fs.readFileSync(file, 'utf8')).modules ?? {};
}

function writeLedger(modules, file = LEDGER) {
  const sorted = Object.fromEntries(Object.entries(modules).sort(([a], [b]) => a.localeCompare(b)));
  const document = {
    $comment:
      "Written by pnpm test:mutation: each module's score and the hash of the inputs it was measured on. Do not edit by hand; see docs/decisions/0022-ci-time.md.",
    modules: sorted,
  };
  fs.writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
}

/**
 * Each module with the hash of its inputs now and its ledger entry; `current` when the entry was
 * measured on exactly these inputs, so its score holds without a rerun.
 */
function planModules(modules, ledger, { repo, tracked }) {
  return modules.map((mod) => {
    const { hash, files } = moduleHash(mod, { repo, tracked });
    const entry = ledger[mod.name];
    return { mod, hash, files, entry, current: entry?.hash === hash };
  });
}

module.exports = { planModules, readLedger, writeLedger, LEDGER };

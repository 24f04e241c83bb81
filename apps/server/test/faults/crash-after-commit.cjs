// Preloaded into a server process by the fault suite (node --require): the Nth request that runs
// in a request transaction (a keyed POST) kills the process with SIGKILL right after its commit,
// before its response is written: the crash between "the work is committed" and "the client
// knows", where a retry must replay and never act twice. Test code only: never in a build.
'use strict';
const path = require('node:path');
const { TransactionRunner } = require(
  path.join(__dirname, '..', '..', 'dist', 'common', 'transactions.js'),
);

const after = Number(process.env.FAULT_CRASH_AFTER_COMMITS);
if (!Number.isInteger(after) || after < 1)
  throw new Error('FAULT_CRASH_AFTER_COMMITS must be a count');
let commits = 0;
const atomic = TransactionRunner.prototype.atomic;
TransactionRunner.prototype.atomic = async function atomicThenCrash(work) {
  const value = await atomic.call(this, work);
  commits += 1;
  if (commits === after) process.kill(process.pid, 'SIGKILL');
  return value;
};

'use strict';
/**
 * Turns the JUnit XML a suite wrote (pytest --junitxml, phpunit --log-junit) into the per-run
 * report tooling/jest/summary-reporter.js writes, so scripts/sum-test-reports.js adds the PHP and
 * Python suites into CI's one "N passed, N failed" line.
 */
const fs = require('node:fs');
const path = require('node:path');
const { XMLParser, XMLValidator } = require('fast-xml-parser');
const { databaseLabel } = require('./fixtures');

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  // Element content (failure messages, captured output) is not needed and may be huge.
  stopNodes: ['*.failure', '*.error', '*.warning', '*.skipped', '*.system-out', '*.system-err'],
  isArray: (name) => ['testsuites', 'testsuite', 'testcase'].includes(name),
});

function toArray(value) {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function attributeCount(node, name) {
  const value = Number(node?.[`@_${name}`]);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

/** Every <testcase> under `node`, at any depth (PHPUnit nests suites per class and data set). */
function testcases(node) {
  if (node === null || typeof node !== 'object') return [];
  const own = toArray(node.testcase);
  const nested = [...toArray(node.testsuites), ...toArray(node.testsuite)].flatMap(testcases);
  return [...own, ...nested];
}

/**
 * Counts of a JUnit XML document: a test case with <failure> or <error> failed, and so did one
 * with <warning> (PHPUnit: a test that could not run as written, e.g. a broken data provider);
 * one with <skipped> is neither passed nor failed (as Jest counts skipped tests); any other
 * passed. Throws when the text is not a JUnit document.
 */
function countJUnit(xml) {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    throw new Error(`not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  }
  const doc = parser.parse(xml);
  const roots = [...toArray(doc.testsuites), ...toArray(doc.testsuite)];
  if (roots.length === 0) throw new Error('no <testsuites> or <testsuite> element');
  // The outermost <testsuite>s: their counts include their nested suites'.
  const topSuites = [
    ...toArray(doc.testsuites).flatMap((r) => toArray(r.testsuite)),
    ...toArray(doc.testsuite),
  ];
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const testcase of roots.flatMap(testcases)) {
    const faults = [testcase.failure, testcase.error, testcase.warning];
    if (faults.some((fault) => fault !== undefined)) failed += 1;
    else if (testcase.skipped !== undefined) skipped += 1;
    else passed += 1;
  }
  // A runner may count an error outside any test case (a suite that failed to load) only on the
  // suite's attributes: trust whichever says more failed.
  const declared = topSuites.reduce(
    (sum, root) => sum + attributeCount(root, 'failures') + attributeCount(root, 'errors'),
    0,
  );
  return { passed, failed: Math.max(failed, declared), skipped };
}

/**
 * The CI report of one run. A missing or unreadable file, or one with no test at all, is a
 * broken suite (a failure), never 0 passed / 0 failed; so is a command that failed although its
 * file shows no failure (it crashed after writing it, or failed outside the tests).
 */
function reportFromJUnit({ file, packageName, exitCode, env = process.env }) {
  const report = {
    package: packageName,
    database: databaseLabel(env),
    passed: 0,
    failed: 0,
    brokenSuites: 0,
  };
  let problem = null;
  try {
    const counts = countJUnit(fs.readFileSync(file, 'utf8'));
    report.passed = counts.passed;
    report.failed = counts.failed;
    if (counts.passed + counts.failed + counts.skipped === 0) problem = 'it holds no test case';
    else if (exitCode !== 0 && counts.failed === 0) {
      problem = `the command exited with ${exitCode} although no test failed`;
    }
  } catch (error) {
    problem =
      error.code === 'ENOENT'
        ? 'the command wrote no JUnit file there'
        : `it cannot be read: ${error.message}`;
  }
  if (problem !== null) report.brokenSuites = 1;
  return { report, problem };
}

/** Writes `report` into `dir` under a unique name, as the Jest summary reporter does. */
function writeReport(report, dir) {
  fs.mkdirSync(dir, { recursive: true });
  const name = `${path.basename(report.package)}-${process.pid}-${Date.now()}.json`;
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(report));
  return file;
}

module.exports = { countJUnit, reportFromJUnit, writeReport };

/**
 * The JUnit → CI report conversion, on files pytest and PHPUnit really wrote (test/fixtures,
 * made with pytest 8 and PHPUnit 9.6 from a sample with passing, failing, erroring, skipped and
 * parametrized tests) and on the runs that must never read as success.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { countJUnit, reportFromJUnit } = require('../src/junit');

const fixture = (name) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');

describe('countJUnit', () => {
  it('counts pytest: a failure and a setup error fail, a skip is neither', () => {
    expect(countJUnit(fixture('pytest-junit.xml'))).toEqual({ passed: 3, failed: 2, skipped: 1 });
  });

  it('counts PHPUnit, whose data sets sit in nested suites', () => {
    expect(countJUnit(fixture('phpunit-junit.xml'))).toEqual({ passed: 3, failed: 2, skipped: 1 });
  });

  it('counts a pytest module that failed to import as a failed test', () => {
    expect(countJUnit(fixture('pytest-collection-error.xml'))).toEqual({
      passed: 0,
      failed: 1,
      skipped: 0,
    });
  });

  it('counts a PHPUnit warning (a test that could not run as written) as failed', () => {
    const xml = `<?xml version="1.0"?><testsuites><testsuite name="S" tests="2" errors="0" failures="0" warnings="1">
      <testcase name="a"/><testcase name="b"><warning type="PHPUnit\\Framework\\Warning">The data provider is invalid</warning></testcase>
    </testsuite></testsuites>`;
    expect(countJUnit(xml)).toEqual({ passed: 1, failed: 1, skipped: 0 });
  });

  it('trusts a suite that declares more errors than its test cases show', () => {
    const xml =
      '<testsuite name="S" tests="1" errors="2" failures="0"><testcase name="a"/></testsuite>';
    expect(countJUnit(xml)).toEqual({ passed: 1, failed: 2, skipped: 0 });
  });

  it('refuses what is not JUnit XML', () => {
    expect(() => countJUnit('<testsuites><testsuite>')).toThrow(/not well-formed/);
    expect(() => countJUnit('<coverage/>')).toThrow(/no <testsuites>/);
    expect(() => countJUnit('')).toThrow();
  });
});

describe('reportFromJUnit', () => {
  let dir;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-live-junit-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const env = { TEST_DATABASE_URL: 'postgres://x', TEST_REDIS_URL: 'redis://x' };
  const write = (text) => {
    const file = path.join(dir, 'junit.xml');
    fs.writeFileSync(file, text);
    return file;
  };

  it('writes the Jest summary reporter’s fields and database label', () => {
    const file = write(fixture('phpunit-junit.xml'));
    expect(reportFromJUnit({ file, packageName: 'client-php', exitCode: 2, env })).toEqual({
      report: {
        package: 'client-php',
        database: 'postgres+redis',
        passed: 3,
        failed: 2,
        brokenSuites: 0,
      },
      problem: null,
    });
    expect(reportFromJUnit({ file, packageName: 'p', exitCode: 0, env: {} }).report.database).toBe(
      'sqlite',
    );
  });

  it.each([
    ['a missing file', null, 0, /wrote no JUnit file/],
    [
      'a truncated file',
      '<testsuites><testsuite name="S"><testcase name="a"/>',
      0,
      /cannot be read/,
    ],
    [
      'a file without a test',
      '<testsuites><testsuite name="S" tests="0"/></testsuites>',
      0,
      /no test case/,
    ],
    [
      'a failed command whose file shows no failure',
      '<testsuite name="S"><testcase name="a"/></testsuite>',
      1,
      /exited with 1 although no test failed/,
    ],
  ])('counts %s as a broken suite', (_label, text, exitCode, problem) => {
    const file = text === null ? path.join(dir, 'absent.xml') : write(text);
    const result = reportFromJUnit({ file, packageName: 'p', exitCode, env: {} });
    expect(result.report.brokenSuites).toBe(1);
    expect(result.problem).toMatch(problem);
  });
});

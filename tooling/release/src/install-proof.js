// `pnpm release:proof`: installs the release's artefacts the way a user would, outside the
// workspace (a fresh temporary directory, no workspace links), and runs each official client
// there against a live server on loopback. Own code because it drives four package managers and
// four runtimes; every install and run is the ecosystem's own command, this file orders them,
// times them and reports one test case per consumer (JUnit, and CI's summary).
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { installConsumers } = require('./install-consumers');
const { runConsumers } = require('./run-consumers');
const { readmeSnippet } = require('./proof-support');

const PACKAGE_NAME = 'release-proof';

/** The workspace's TypeScript range (pnpm-workspace.yaml's catalog), so tsc is the one we build with. */
function typescriptSpec(root) {
  const text = fs.readFileSync(path.join(root, 'pnpm-workspace.yaml'), 'utf8');
  const match = /^\s+typescript:\s*['"]?([^'"\s]+)['"]?\s*$/m.exec(text);
  return `typescript@${match ? match[1] : 'latest'}`;
}

/** A problem with the proof's input (no release folder, say): reported without a stack. */
class ProofInputError extends Error {}

/** The artefacts the proof installs, from release/<version>/manifest.json. */
function findArtefacts(releaseDir) {
  const manifestFile = path.join(releaseDir, 'manifest.json');
  if (!fs.existsSync(manifestFile)) {
    throw new ProofInputError(`${manifestFile} not found: run \`pnpm release --dry-run\` first`);
  }
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  const pick = (test, what) => {
    const found = manifest.artefacts.filter((a) => test(a.file));
    if (found.length !== 1) {
      throw new ProofInputError(`expected one ${what} in ${manifestFile}, found ${found.length}`);
    }
    return path.join(releaseDir, found[0].file);
  };
  return {
    version: manifest.version,
    clientTarball: pick((f) => /^npm\/platform-client-.*\.tgz$/.test(f), 'client tarball'),
    wheel: pick((f) => /^python\/.*\.whl$/.test(f), 'Python wheel'),
    phpArchive: pick((f) => /^php\/.*\.zip$/.test(f), 'PHP archive'),
  };
}

/** The `exports` of the packed client's package.json (read from the tarball, not the workspace). */
function packedExports(tarball) {
  const text = execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], {
    encoding: 'utf8',
  });
  return JSON.parse(text).exports ?? {};
}

/** The line of a failure's output that says what went wrong: the first error line, or the first. */
function headline(detail) {
  const lines = detail
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return (
    lines.find((l) => /\b(ERR!?|ERR_[A-Z0-9_]+|[Ee]rror|failed|Fatal)\b/.test(l)) ?? lines[0] ?? ''
  );
}

/** The last lines of a command's output: what a failed case reports. */
function tail(output, lines = 15) {
  return output.trimEnd().split('\n').slice(-lines).join('\n');
}

function escapeXml(text) {
  return String(text)
    .replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** One <testcase> per consumer; a failed one carries the command's last lines. */
function junitXml(cases, totalMs) {
  const failures = cases.filter((c) => !c.ok).length;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${PACKAGE_NAME}" tests="${cases.length}" failures="${failures}" time="${(totalMs / 1000).toFixed(3)}">`,
    `  <testsuite name="${PACKAGE_NAME}" tests="${cases.length}" failures="${failures}" errors="0" skipped="0">`,
  ];
  for (const c of cases) {
    const open = `    <testcase classname="${escapeXml(c.consumer)}" name="${escapeXml(c.check)}" time="${(c.ms / 1000).toFixed(3)}"`;
    if (c.ok) lines.push(`${open}/>`);
    else {
      lines.push(
        `${open}>`,
        `      <failure message="${escapeXml(headline(c.detail))}">${escapeXml(c.detail)}</failure>`,
        '    </testcase>',
      );
    }
  }
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}

/** The table printed at the end: what ran, how long it took, and whether it passed. */
function table(cases) {
  const rows = cases.map((c) => [
    c.ok ? 'PASS' : 'FAIL',
    c.consumer,
    c.check,
    `${(c.ms / 1000).toFixed(1)} s`,
    c.ok ? (c.note ?? '') : headline(c.detail).slice(0, 120),
  ]);
  const header = ['result', 'consumer', 'check', 'time', 'detail'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The JUnit file, CI's report and the summary; the work directory goes unless kept or failed. */
function finish({ cases, started, work, logFile, junit, keep, env, version, log }) {
  const totalMs = Date.now() - started;
  const failed = cases.filter((c) => !c.ok).length;
  const junitFile = path.join(work, 'junit.xml');
  fs.writeFileSync(junitFile, junitXml(cases, totalMs));
  if (junit) {
    fs.mkdirSync(path.dirname(path.resolve(junit)), { recursive: true });
    fs.copyFileSync(junitFile, path.resolve(junit));
  }
  const exitCode = failed > 0 ? 1 : 0;
  const { reportFromJUnit, writeReport } = require('@platform/sdk-live');
  const { report, problem } = reportFromJUnit({
    file: junitFile,
    packageName: PACKAGE_NAME,
    exitCode,
    env,
  });
  if (problem) log(`junit: ${problem}`);
  if (env.PLATFORM_TEST_REPORT_DIR) writeReport(report, env.PLATFORM_TEST_REPORT_DIR);

  log(`\nrelease proof ${version}: the artefacts installed outside the workspace and run\n`);
  log(table(cases));
  log(
    `\nrelease proof: ${cases.length - failed} of ${cases.length} checks passed, ${failed} failed, in ${(totalMs / 1000).toFixed(0)} s`,
  );
  if (keep || failed > 0) log(`work directory kept: ${work} (log: ${logFile})`);
  else fs.rmSync(work, { recursive: true, force: true });
  return { cases, exitCode, junitFile };
}

/**
 * The whole proof. Resolves with { cases, exitCode, junitFile }. `only` limits it to some of
 * npm, pnpm, yarn, bun, deno, python, php (bun and deno run in the npm project).
 */
async function installProof({
  root,
  releaseDir,
  junit,
  keep = false,
  only,
  env = process.env,
  log = (line) => process.stdout.write(`${line}\n`),
}) {
  const started = Date.now();
  const artefacts = findArtefacts(releaseDir);
  const { version } = artefacts;
  const want = (name) => !only || only.includes(name);
  if (want('bun') || want('deno')) {
    if (only && !only.includes('npm')) only.push('npm');
  }
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'platform-release-proof-')));
  const logFile = path.join(work, 'proof.log');
  fs.writeFileSync(logFile, `release proof of ${version} (${releaseDir})\n`);
  log(`release proof ${version}: artefacts from ${releaseDir}; working in ${work}`);

  const cases = [];
  const record = (consumer, check, result, note) => {
    const entry = { consumer, check, ms: result.ms, ok: result.code === 0, note };
    if (!entry.ok) entry.detail = result.detail ?? tail(result.output);
    cases.push(entry);
    log(
      `  ${entry.ok ? 'PASS' : 'FAIL'}  ${consumer}: ${check} (${(result.ms / 1000).toFixed(1)} s)`,
    );
    if (!entry.ok) log(entry.detail.replace(/^/gm, '        '));
    return entry.ok;
  };

  // Installs talk to the npm registry (and nothing else); everything after them is loopback only.
  // npm and pnpm must not see the settings pnpm passes to this script (npm_config_*, npm_package_*,
  // the workspace's INIT_CWD) nor the hermetic guard of a parent: a user's environment.
  const installEnv = { ...env };
  for (const name of Object.keys(installEnv)) {
    if (/^(npm_|pnpm_script|NODE_OPTIONS$|INIT_CWD$)/i.test(name)) delete installEnv[name];
  }
  const exportsMap = packedExports(artefacts.clientTarball);
  const hasWebhooksEntry = Object.prototype.hasOwnProperty.call(exportsMap, './webhooks');
  const tsSpec = typescriptSpec(root);

  const proof = {
    artefacts,
    want,
    work,
    logFile,
    record,
    installEnv,
    hasWebhooksEntry,
    tsSpec,
    env,
    version,
    log,
  };
  const installed = await installConsumers(proof);

  await runConsumers(proof, installed);

  return finish({ cases, started, work, logFile, junit, keep, env, version, log });
}

module.exports = {
  installProof,
  ProofInputError,
  findArtefacts,
  junitXml,
  readmeSnippet,
  table,
  typescriptSpec,
};

// `pnpm release:proof`: installs the release's artefacts the way a user would, outside the
// workspace (a fresh temporary directory, no workspace links), and runs each official client
// there against a live server on loopback. Own code because it drives four package managers and
// four runtimes; every install and run is the ecosystem's own command, this file orders them,
// times them and reports one test case per consumer (JUnit, and CI's summary).
'use strict';

const { spawn, execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const PROOF_FILES = path.join(__dirname, '..', 'proof');
const PHP_README = path.join(__dirname, '..', '..', '..', 'packages', 'client-php', 'README.md');
/** Pinned so that every run tests the same runtimes; both ship their binaries as npm packages. */
const BUN = 'bun@1.4.5';
const DENO = 'deno@2.9.6';
const YARN = 'yarn@1.22.22';
/**
 * The JSON block after `<!-- proof: NAME … -->` in a README, with `<dir>` and `<version>` filled
 * in: what a user copies, proven as written.
 */
function readmeSnippet(file, name, values) {
  const text = fs.readFileSync(file, 'utf8');
  const match = new RegExp(`<!-- proof: ${name}\\b.*?-->\\s*\`\`\`json\\n([\\s\\S]*?)\`\`\``).exec(
    text,
  );
  if (!match) throw new Error(`${path.basename(file)} has no \`proof: ${name}\` JSON block`);
  const filled = match[1].replace(/<(dir|version)>/g, (_, key) =>
    JSON.stringify(values[key]).slice(1, -1),
  );
  return JSON.parse(filled);
}

const INSTALL_TIMEOUT_MS = 10 * 60_000;
const RUN_TIMEOUT_MS = 2 * 60_000;
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

/**
 * Runs a command without blocking the event loop (the live server runs in this process), with
 * its output in `logFile`. Resolves with { code, ms, output }; never rejects.
 */
function exec(command, args, { cwd, env, logFile, timeoutMs = RUN_TIMEOUT_MS }) {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks = [];
    fs.appendFileSync(logFile, `\n$ ${[command, ...args].join(' ')}   (in ${cwd})\n`);
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => {
      chunks.push(Buffer.from(`\n(killed after ${timeoutMs / 1000} s)\n`));
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    const done = (code) => {
      clearTimeout(timer);
      const output = Buffer.concat(chunks).toString('utf8');
      fs.appendFileSync(logFile, output);
      resolve({ code, ms: Date.now() - started, output });
    };
    child.on('error', (error) => {
      chunks.push(Buffer.from(`could not run ${command}: ${error.message}\n`));
      done(127);
    });
    child.on('close', (code, signal) => done(signal ? 128 : (code ?? 1)));
  });
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

function writeJson(file, value) {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
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

/**
 * A Standard Webhooks delivery of a student.created event, built and signed by the server's
 * own code (the body as its dispatcher builds it, the signature by its Signer), so the SDKs'
 * verifiers are checked against what the server sends. Signed afresh for each consumer: the
 * verifiers accept a timestamp within 5 minutes.
 */
function signedDelivery() {
  const { Signer, webhookPayload } = require('@platform/server/testing');
  const secret = `whsec_${crypto.randomBytes(32).toString('base64')}`;
  const studentId = 'stu_01KDXC5T2N8P4Q6R9S3V5W7X0Y';
  const now = new Date();
  const body = webhookPayload({
    eventId: 'evt_01KDXC5V9P7K2M4N6Q8R0S2T4V',
    eventType: 'student.created',
    eventCreatedAt: now,
    eventPosition: 1,
    eventData: JSON.stringify({
      id: studentId,
      object: 'student',
      student_number: 'S-2026-0042',
      first_name: 'Ana',
      last_name: 'Souza',
      preferred_name: null,
      email: 'ana.souza@school.test',
      date_of_birth: '2012-03-14',
      status: 'active',
      grade_level: 7,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    }),
  });
  const id = `msg_${crypto.randomBytes(12).toString('hex')}`;
  const headers = {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Signer().sign([secret], id, now, body),
  };
  return {
    PROOF_WEBHOOK_SECRET: secret,
    PROOF_WEBHOOK_BODY_B64: Buffer.from(body, 'utf8').toString('base64'),
    PROOF_WEBHOOK_HEADERS: JSON.stringify(headers),
    PROOF_WEBHOOK_STUDENT_ID: studentId,
  };
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
  const blocked = (why) => ({ code: 1, ms: 0, detail: why });

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

  const projects = [];
  const installNode = async (manager, { command = manager, typescript = true } = {}) => {
    const dir = path.join(work, manager);
    fs.mkdirSync(dir);
    writeJson(path.join(dir, 'package.json'), {
      name: `proof-${manager}`,
      version: '0.0.0',
      private: true,
    });
    const add =
      manager === 'npm'
        ? ['install', '--no-audit', '--no-fund']
        : manager === 'yarn'
          ? ['add', '--non-interactive']
          : ['add'];
    // The client alone first: it must install from its tarball with nothing else at hand.
    const client = await exec(command, [...add, artefacts.clientTarball], {
      cwd: dir,
      env: installEnv,
      logFile,
      timeoutMs: INSTALL_TIMEOUT_MS,
    });
    let ok = record(manager, `install ${path.basename(artefacts.clientTarball)} alone`, client);
    if (ok && typescript) {
      const ts = await exec(command, [...add, manager === 'npm' ? '--save-dev' : '-D', tsSpec], {
        cwd: dir,
        env: installEnv,
        logFile,
        timeoutMs: INSTALL_TIMEOUT_MS,
      });
      ok = record(manager, `install ${tsSpec} (for tsc)`, ts);
    }
    for (const file of ['checks.cjs', 'consumer.mjs', 'consumer.cjs']) {
      fs.copyFileSync(path.join(PROOF_FILES, file), path.join(dir, file));
    }
    for (const ext of ['mts', 'cts']) {
      fs.copyFileSync(path.join(PROOF_FILES, 'consumer.ts'), path.join(dir, `consumer.${ext}`));
    }
    const tsFiles = ['consumer.mts', 'consumer.cts'];
    if (hasWebhooksEntry) {
      fs.copyFileSync(
        path.join(PROOF_FILES, 'consumer-webhooks.ts'),
        path.join(dir, 'consumer-webhooks.mts'),
      );
      tsFiles.push('consumer-webhooks.mts');
    }
    writeJson(path.join(dir, 'tsconfig.json'), {
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        lib: ['es2022', 'dom'],
        types: [],
      },
      files: tsFiles,
    });
    // `module: commonjs` (a stock NestJS app) resolves with node10, which ignores `exports`:
    // the subpath's types must be found another way (typesVersions).
    const cjsFiles = ['consumer-commonjs.ts'];
    fs.copyFileSync(path.join(PROOF_FILES, 'consumer.ts'), path.join(dir, 'consumer-commonjs.ts'));
    if (hasWebhooksEntry) {
      fs.copyFileSync(
        path.join(PROOF_FILES, 'consumer-webhooks.ts'),
        path.join(dir, 'consumer-webhooks-commonjs.ts'),
      );
      cjsFiles.push('consumer-webhooks-commonjs.ts');
    }
    writeJson(path.join(dir, 'tsconfig.commonjs.json'), {
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'es2022',
        module: 'commonjs',
        lib: ['es2022', 'dom'],
        types: [],
      },
      files: cjsFiles,
    });
    projects.push({
      manager,
      dir,
      ok,
      tscChecks: typescript
        ? [
            {
              check: `tsc --strict, no skipLibCheck: ${tsFiles.join(' ')}`,
              config: 'tsconfig.json',
            },
            {
              check: `tsc --strict, module commonjs (node10 resolution): ${cjsFiles.join(' ')}`,
              config: 'tsconfig.commonjs.json',
            },
          ]
        : [],
    });
  };
  if (want('npm')) await installNode('npm');
  if (want('pnpm')) await installNode('pnpm');
  if (want('yarn')) {
    // Yarn 1 from its npm package; the client tarball has no dependencies, so `yarn add` needs
    // no registry (tsc is proven in the npm and pnpm projects, so none is installed here).
    const yarnDir = path.join(work, 'yarn-bin');
    fs.mkdirSync(yarnDir);
    writeJson(path.join(yarnDir, 'package.json'), { name: 'proof-yarn-bin', private: true });
    const result = await exec('npm', ['install', '--no-audit', '--no-fund', YARN], {
      cwd: yarnDir,
      env: installEnv,
      logFile,
      timeoutMs: INSTALL_TIMEOUT_MS,
    });
    if (record('yarn', `install ${YARN} (npm package)`, result)) {
      await installNode('yarn', {
        command: path.join(yarnDir, 'node_modules', '.bin', 'yarn'),
        typescript: false,
      });
    } else {
      projects.push({ manager: 'yarn', dir: undefined, ok: false, tscChecks: [] });
    }
  }

  let runtimesDir;
  if (want('bun') || want('deno')) {
    // The runtimes live beside the consumer project, which keeps only the client and TypeScript.
    runtimesDir = path.join(work, 'runtimes');
    fs.mkdirSync(runtimesDir);
    writeJson(path.join(runtimesDir, 'package.json'), {
      name: 'proof-runtimes',
      version: '0.0.0',
      private: true,
    });
    const specs = [want('bun') && BUN, want('deno') && DENO].filter(Boolean);
    const result = await exec('npm', ['install', '--no-audit', '--no-fund', ...specs], {
      cwd: runtimesDir,
      env: installEnv,
      logFile,
      timeoutMs: INSTALL_TIMEOUT_MS,
    });
    if (!record('bun, deno', `install ${specs.join(' ')} (npm packages)`, result)) {
      runtimesDir = undefined;
    }
  }

  let venvPython;
  let asyncVenvPython;
  if (want('python')) {
    const dir = path.join(work, 'python');
    fs.mkdirSync(dir);
    fs.copyFileSync(path.join(PROOF_FILES, 'consumer.py'), path.join(dir, 'consumer.py'));
    // Debian's python3 (python3-venv, from scripts/sdk-toolchains.sh), else the one on PATH.
    const python =
      env.PROOF_PYTHON ?? (fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
    // No pip.conf either (a machine's find-links could supply a dependency the wheel declares).
    const pipEnv = {
      ...installEnv,
      PIP_CONFIG_FILE: os.devNull,
      PIP_DISABLE_PIP_VERSION_CHECK: '1',
      PYTHONNOUSERSITE: '1',
    };
    const venv = await exec(python, ['-m', 'venv', path.join(dir, 'venv')], {
      cwd: dir,
      env: pipEnv,
      logFile,
      timeoutMs: INSTALL_TIMEOUT_MS,
    });
    let result = venv;
    if (venv.code === 0) {
      // No index: the wheel must need nothing but the standard library.
      result = await exec(
        path.join(dir, 'venv', 'bin', 'python'),
        ['-m', 'pip', 'install', '--no-index', artefacts.wheel],
        { cwd: dir, env: pipEnv, logFile, timeoutMs: INSTALL_TIMEOUT_MS },
      );
      result.ms += venv.ms;
    }
    if (
      record('python', `venv + pip install --no-index ${path.basename(artefacts.wheel)}`, result)
    ) {
      venvPython = path.join(dir, 'venv', 'bin', 'python');
    }
    // `platform-api[async]`: its one dependency, httpx, is Debian's python3-httpx, which a venv
    // with the system's site packages sees, so the install still asks no index.
    const asyncVenv = path.join(dir, 'venv-async');
    let asyncResult = await exec(python, ['-m', 'venv', '--system-site-packages', asyncVenv], {
      cwd: dir,
      env: pipEnv,
      logFile,
      timeoutMs: INSTALL_TIMEOUT_MS,
    });
    if (asyncResult.code === 0) {
      asyncResult = await exec(
        path.join(asyncVenv, 'bin', 'python'),
        ['-m', 'pip', 'install', '--no-index', `${artefacts.wheel}[async]`],
        { cwd: dir, env: pipEnv, logFile, timeoutMs: INSTALL_TIMEOUT_MS },
      );
    }
    if (
      record(
        'python (async)',
        `venv + pip install --no-index '${path.basename(artefacts.wheel)}[async]'`,
        asyncResult,
      )
    ) {
      asyncVenvPython = path.join(asyncVenv, 'bin', 'python');
    }
  }

  const phpDirs = [];
  if (want('php')) {
    const composerEnv = {
      ...installEnv,
      COMPOSER_HOME: path.join(work, '.composer'),
      COMPOSER_CACHE_DIR: path.join(work, '.composer', 'cache'),
      COMPOSER_DISABLE_NETWORK: '1',
    };
    const zipDir = path.join(work, 'php-zip');
    const unpacked = path.join(work, 'php-archive');
    fs.mkdirSync(zipDir);
    fs.mkdirSync(unpacked);
    fs.copyFileSync(artefacts.phpArchive, path.join(zipDir, path.basename(artefacts.phpArchive)));
    const unzip = await exec(
      'php',
      [
        '-r',
        '$z = new ZipArchive(); if ($z->open($argv[1]) !== true || !$z->extractTo($argv[2])) { fwrite(STDERR, "cannot extract $argv[1]\\n"); exit(1); }',
        artefacts.phpArchive,
        unpacked,
      ],
      { cwd: work, env: composerEnv, logFile },
    );
    // The PHP README's own composer.json snippets, so the instructions users follow are the
    // ones proven: the zip as an artifact repository, and unpacked as a path repository.
    for (const [name, dir] of [
      ['composer-artifact', zipDir],
      ['composer-path', unpacked],
    ]) {
      const consumer = `php (${name.replace('composer-', '')})`;
      const project = path.join(work, name);
      fs.mkdirSync(project);
      fs.copyFileSync(path.join(PROOF_FILES, 'consumer.php'), path.join(project, 'consumer.php'));
      let result = unzip;
      try {
        const snippet = readmeSnippet(PHP_README, name, { dir, version });
        writeJson(path.join(project, 'composer.json'), {
          name: 'proof/php-consumer',
          ...snippet,
          repositories: [...snippet.repositories, { 'packagist.org': false }],
        });
      } catch (error) {
        result = blocked(error.message);
      }
      if (result.code === 0) {
        result = await exec('composer', ['install', '--no-interaction', '--no-progress'], {
          cwd: project,
          env: composerEnv,
          logFile,
          timeoutMs: INSTALL_TIMEOUT_MS,
        });
      }
      const what = `README snippet ${name}: composer install ${path.basename(artefacts.phpArchive)} (offline)`;
      if (record(consumer, what, result)) phpDirs.push({ consumer, dir: project });
      else phpDirs.push({ consumer, dir: undefined });
    }
  }

  // From here on: loopback only, for this process and every Node child (tooling/hermetic).
  require('@platform/hermetic').enforceForRun();
  const guardedEnv = { ...installEnv, NODE_OPTIONS: process.env.NODE_OPTIONS };
  const {
    startServer,
    createFixtures,
    fixtureEnv,
    writeFixturesFile,
  } = require('@platform/sdk-live');
  let server;
  let fixturesFile;
  try {
    server = await startServer({ env });
    const fixtures = await createFixtures(server, { env, refreshTokens: 1 });
    fixturesFile = writeFixturesFile(fixtures);
    log(`live server ${server.url} (${fixtures.database}) with an organization and its token`);
    const runEnv = {
      ...guardedEnv,
      ...fixtureEnv(fixtures, fixturesFile.file),
      PROOF_VERSION: version,
      ...(hasWebhooksEntry && { PROOF_WEBHOOKS_ENTRY: '1' }),
    };
    /** Runs one consumer script with a freshly signed delivery; its last line is the note. */
    const run = ({ consumer, label, check, command, args, cwd, extra = {} }) =>
      exec(command, args, {
        cwd,
        env: { ...runEnv, ...signedDelivery(), PROOF_LABEL: label, ...extra },
        logFile,
      }).then((result) => record(consumer, check, result, result.output.trim().split('\n').pop()));
    const entries = hasWebhooksEntry ? '`.` and `./webhooks`' : '`.`';

    for (const { manager, dir, ok, tscChecks } of projects) {
      if (!ok) {
        for (const check of ['node ESM', 'node CommonJS', ...tscChecks.map((t) => t.check)])
          record(manager, check, blocked('not run: the install above failed'));
        continue;
      }
      for (const [kind, file] of [
        ['ESM', 'consumer.mjs'],
        ['CommonJS', 'consumer.cjs'],
      ]) {
        await run({
          consumer: manager,
          label: `${manager}-node-${kind.toLowerCase()}`,
          check: `node ${kind} (${entries})`,
          command: process.execPath,
          args: [file],
          cwd: dir,
        });
      }
      for (const { check, config } of tscChecks) {
        const tsc = await exec(
          process.execPath,
          [path.join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config],
          { cwd: dir, env: guardedEnv, logFile },
        );
        record(manager, check, tsc, `type-checked in ${(tsc.ms / 1000).toFixed(1)} s`);
      }
    }

    const npmProject = projects.find((p) => p.manager === 'npm');
    // Bun and Deno are no Node: the hermetic guard (NODE_OPTIONS) does not reach them; the
    // script talks to PLATFORM_BASE_URL only, and Deno is held to loopback by its permissions.
    const runtimeEnv = {
      NODE_OPTIONS: '',
      DO_NOT_TRACK: '1',
      DENO_NO_UPDATE_CHECK: '1',
      DENO_NO_PROMPT: '1',
    };
    for (const runtime of ['bun', 'deno']) {
      if (!want(runtime)) continue;
      for (const [kind, file] of [
        ['ESM', 'consumer.mjs'],
        ['CommonJS', 'consumer.cjs'],
      ]) {
        const check = `${runtime} ${kind} in the npm project (${entries})`;
        if (!runtimesDir || !npmProject?.ok) {
          record(runtime, check, blocked('not run: its install or the npm project failed'));
          continue;
        }
        const port = new URL(server.url).port;
        const args =
          // Neither may fetch a package itself: Bun's auto-install off, Deno from the cache only.
          runtime === 'bun'
            ? ['--no-install', file]
            : [
                'run',
                '--cached-only',
                `--allow-net=127.0.0.1:${port}`,
                '--allow-env',
                `--allow-read=${npmProject.dir}`,
                file,
              ];
        await run({
          consumer: runtime,
          label: `${runtime}-${kind.toLowerCase()}`,
          check,
          command: path.join(runtimesDir, 'node_modules', '.bin', runtime),
          args,
          cwd: npmProject.dir,
          extra: runtimeEnv,
        });
      }
    }

    if (want('python')) {
      const check = 'script in the venv (import platform_api)';
      if (venvPython) {
        await run({
          consumer: 'python',
          label: 'python',
          check,
          command: venvPython,
          args: ['consumer.py'],
          cwd: path.join(work, 'python'),
        });
      } else record('python', check, blocked('not run: the install above failed'));
      const asyncCheck = 'script in the venv, AsyncPlatformClient too';
      if (asyncVenvPython) {
        await run({
          consumer: 'python (async)',
          label: 'python-async',
          check: asyncCheck,
          command: asyncVenvPython,
          args: ['consumer.py'],
          cwd: path.join(work, 'python'),
          extra: { PROOF_ASYNC: '1' },
        });
      } else record('python (async)', asyncCheck, blocked('not run: the install above failed'));
    }
    for (const { consumer, dir } of phpDirs) {
      const check = 'script with vendor/autoload.php';
      if (dir) {
        await run({
          consumer,
          label: consumer.replace(/[^a-z]+/g, '-').replace(/-$/, ''),
          check,
          command: 'php',
          args: ['consumer.php'],
          cwd: dir,
        });
      } else record(consumer, check, blocked('not run: the install above failed'));
    }
  } catch (error) {
    record('server', 'live server and fixtures', blocked(String(error.stack ?? error)));
  } finally {
    fixturesFile?.remove();
    await server?.close();
  }

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

module.exports = {
  installProof,
  ProofInputError,
  findArtefacts,
  junitXml,
  readmeSnippet,
  table,
  typescriptSpec,
};

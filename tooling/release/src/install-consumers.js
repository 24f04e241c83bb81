'use strict';
// The release proof's installs: each consumer project set up outside the workspace, the way a
// user would, with every result recorded as a check.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  BUN,
  DENO,
  INSTALL_TIMEOUT_MS,
  PHP_README,
  PROOF_FILES,
  YARN,
  blocked,
  exec,
  readmeSnippet,
  writeJson,
} = require('./proof-support');

/** A Node project that installs the client with `manager`; its tsc checks go into `projects`. */
async function installNode(
  proof,
  projects,
  manager,
  { command = manager, typescript = true } = {},
) {
  const { artefacts, logFile, record, installEnv, hasWebhooksEntry, tsSpec, work } = proof;
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
  const { tsFiles, cjsFiles } = writeTsProjects(dir, hasWebhooksEntry);
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
}

/** The consumer files and the two tsconfigs (nodenext and commonjs) of a Node project. */
function writeTsProjects(dir, hasWebhooksEntry) {
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
  return { tsFiles, cjsFiles };
}

/** Yarn 1 from its npm package, then a project that installs the client with it. */
async function installYarn(proof, projects) {
  const { work, logFile, record, installEnv } = proof;
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
    await installNode(proof, projects, 'yarn', {
      command: path.join(yarnDir, 'node_modules', '.bin', 'yarn'),
      typescript: false,
    });
  } else {
    projects.push({ manager: 'yarn', dir: undefined, ok: false, tscChecks: [] });
  }
}

/** Bun and Deno from their npm packages: the directory holding them, or undefined if that failed. */
async function installRuntimes(proof) {
  const { want, work, logFile, record, installEnv } = proof;
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
  return runtimesDir;
}

/** A venv with the wheel, and one with `[async]`: their pythons, for the installs that worked. */
async function installPython(proof) {
  const { artefacts, want, work, logFile, record, installEnv, env } = proof;
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
  return { venvPython, asyncVenvPython };
}

/** The PHP package through the README's composer snippets: one project each, its dir if it installed. */
async function installPhp(proof) {
  const { artefacts, want, work, logFile, record, installEnv, version } = proof;
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
  return phpDirs;
}

/** Every consumer `proof.want`s, installed in turn; what the runs need to find them. */
async function installConsumers(proof) {
  const { want } = proof;
  const projects = [];
  if (want('npm')) await installNode(proof, projects, 'npm');
  if (want('pnpm')) await installNode(proof, projects, 'pnpm');
  if (want('yarn')) await installYarn(proof, projects);
  const runtimesDir = await installRuntimes(proof);
  const { venvPython, asyncVenvPython } = await installPython(proof);
  const phpDirs = await installPhp(proof);
  return { projects, runtimesDir, venvPython, asyncVenvPython, phpDirs };
}

module.exports = { installConsumers };

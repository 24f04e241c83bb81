// `pnpm release [--dry-run]`: builds the release's artefacts into release/<version>/ with a
// changelog and a manifest. Own code because the six packages come from three ecosystems
// (pnpm pack, python -m build, composer archive) and a Docker build context; each step calls the
// ecosystem's own tool, this file only orders them and records what they produced.
'use strict';

const { execFileSync, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { PACKAGES, checkVersions } = require('./versions');

/** What the server image's build context leaves out: .dockerignore, plus the release output. */
function dockerIgnored(root) {
  const patterns = fs
    .readFileSync(path.join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  return patterns.map((pattern) => {
    // The patterns in use are plain names, optionally under `**/`: a path segment match.
    const name = pattern.replace(/^\*\*\//, '').replace(/\/$/, '');
    if (/[*?[\]!]/.test(name))
      throw new Error(`.dockerignore: pattern "${pattern}" is not supported here`);
    return pattern.startsWith('**/')
      ? (file) => file.split('/').includes(name) || file.includes(`/${name}/`)
      : (file) => file === name || file.startsWith(`${name}/`);
  });
}

/** The files `docker build .` would send: tracked and new files, minus ignored ones. */
function imageContextFiles(root) {
  const listed = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  )
    .split('\0')
    .filter(Boolean);
  const ignored = dockerIgnored(root);
  return [...new Set(listed)]
    .filter((file) => !ignored.some((test) => test(file)) && fs.existsSync(path.join(root, file)))
    .sort();
}

/** The `## <version>` section of a Changesets CHANGELOG.md, or null. */
function changelogEntry(text, version) {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.trim() === `## ${version}`);
  if (start < 0) return null;
  let end = lines.findIndex((line, i) => i > start && /^## /.test(line));
  if (end < 0) end = lines.length;
  return lines
    .slice(start + 1, end)
    .join('\n')
    .trim();
}

/** The pending changesets (.changeset/*.md other than the README). */
function pendingChangesets(root) {
  const dir = path.join(root, '.changeset');
  return fs
    .readdirSync(dir)
    .filter((file) => file.endsWith('.md') && file !== 'README.md')
    .map((file) => `.changeset/${file}`);
}

function sha256(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** A Python with `build` and `hatchling` (Debian's python3-build, python3-hatchling: offline). */
function pythonWithBuild() {
  for (const python of [process.env.PYTHON, 'python3', '/usr/bin/python3']) {
    if (!python) continue;
    const probe = spawnSync(python, ['-c', 'import build, hatchling'], { stdio: 'ignore' });
    if (probe.status === 0) return python;
  }
  throw new Error(
    'no Python with `build` and `hatchling`: run scripts/sdk-toolchains.sh (apt python3-build python3-hatchling)',
  );
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}`);
  }
}

function git(root, args) {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
}

/** npm: pnpm pack rewrites workspace:* ranges to the released version. */
function packNpm(root, target, artefacts) {
  // The client: it is generated from the contract and carries no dependency, so the contract
  // (the server's and the generators' source) stays private. The mirror (platform-sync) bundles
  // the client and the contract's schemas; it depends only on the database drivers. The listener
  // (platform-listen) runs the client's own command and depends on the client of its version.
  for (const name of ['@platform/client', '@platform/sync', '@platform/listen']) {
    const dir = fs.mkdtempSync(path.join(target, 'npm', '.pack-'));
    run('pnpm', ['--filter', name, 'pack', '--pack-destination', dir], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    for (const file of fs.readdirSync(dir)) {
      fs.renameSync(path.join(dir, file), path.join(target, 'npm', file));
      artefacts.push({ kind: 'npm tarball', package: name, file: path.join(target, 'npm', file) });
    }
    fs.rmSync(dir, { recursive: true });
  }
}

function buildPython(root, target) {
  // Python: the sdist, then the wheel built from it, offline (no isolation and no dependency
  // check: the build backend comes from Debian, as in scripts/package_check.py), from a copy so
  // the build leaves nothing behind in the repository.
  const pythonCopy = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-release-python-'));
  try {
    fs.cpSync(path.join(root, PACKAGES['@platform/client-python']), pythonCopy, {
      recursive: true,
      filter: (src) =>
        !/(^|\/)(node_modules|dist|build|__pycache__|\.test-reports|\.venv)$/.test(src),
    });
    run(
      pythonWithBuild(),
      [
        '-m',
        'build',
        '--no-isolation',
        '--skip-dependency-check',
        '--outdir',
        path.join(target, 'python'),
        pythonCopy,
      ],
      {
        cwd: pythonCopy,
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
      },
    );
  } finally {
    fs.rmSync(pythonCopy, { recursive: true, force: true });
  }
}

function archivePhp(root, target, version) {
  // PHP: composer's own archive, honouring composer.json's archive.exclude.
  run(
    'composer',
    [
      'archive',
      '--no-interaction',
      '--quiet',
      '--format=zip',
      `--dir=${path.join(target, 'php')}`,
      `--file=platform-api-${version}`,
    ],
    {
      cwd: path.join(root, PACKAGES['@platform/client-php']),
      env: { ...process.env, COMPOSER_DISABLE_NETWORK: '1' },
    },
  );
  // The archive's composer.json gets the release's version: Composer's artifact repository
  // (and a path repository on the unpacked archive) needs one, which Packagist takes from the
  // tag instead, so the committed composer.json has none.
  const zip = path.join(target, 'php', `platform-api-${version}.zip`);
  run('php', [
    '-r',
    [
      '$z = new ZipArchive();',
      'if ($z->open($argv[1]) !== true) { fwrite(STDERR, "cannot open $argv[1]\\n"); exit(1); }',
      '$c = json_decode($z->getFromName("composer.json"), true, 512, JSON_THROW_ON_ERROR);',
      '$c = ["name" => $c["name"], "version" => $argv[2]] + $c;',
      '$z->addFromString("composer.json", json_encode($c, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR) . "\\n");',
      'if (!$z->close()) exit(1);',
    ].join(' '),
    zip,
    version,
  ]);
}

function writeImageContext(root, target, version) {
  // The server image: the build context `docker build` would receive (the Dockerfile builds the
  // workspace itself), as a tarball to `docker build - < file` or unpack and build.
  const files = imageContextFiles(root);
  if (!files.includes('Dockerfile')) throw new Error('the image context has no Dockerfile');
  const context = path.join(target, 'server', `server-image-context-${version}.tar.gz`);
  execFileSync('tar', ['--create', '--gzip', '--file', context, '--null', '--files-from', '-'], {
    cwd: root,
    input: files.join('\0'),
  });
  return files;
}

/** The release's CHANGELOG.md: each package's entry for the version. */
function writeChangelog(target, version, entries) {
  const changelog = [`# Release ${version}`, ''];
  for (const { name, entry } of entries)
    changelog.push(
      `## ${name}`,
      '',
      entry === null
        ? '(no changelog entry)'
        : entry || 'Version bump only: no change of its own (the six packages share one version).',
      '',
    );
  fs.writeFileSync(path.join(target, 'CHANGELOG.md'), `${changelog.join('\n').trimEnd()}\n`);
}

/**
 * The version the packages share, and the release's preconditions: problems go to `warn`, which
 * decides whether they stop the release.
 */
function preconditions(root, warn) {
  const { version, errors } = checkVersions(root);
  if (errors.length > 0)
    throw new Error(`the packages disagree on the version:\n  ${errors.join('\n  ')}`);
  const pending = pendingChangesets(root);
  if (pending.length > 0) {
    warn(
      `${pending.length} changeset(s) not yet applied (run pnpm changeset version): ${pending.join(', ')}`,
    );
  }
  const dirty = git(root, ['status', '--porcelain']) !== '';
  if (dirty) warn('the working tree has uncommitted changes');

  const entries = Object.entries(PACKAGES).map(([name, dir]) => {
    const file = path.join(root, dir, 'CHANGELOG.md');
    const entry = fs.existsSync(file)
      ? changelogEntry(fs.readFileSync(file, 'utf8'), version)
      : null;
    if (entry === null) warn(`${dir}/CHANGELOG.md has no "## ${version}" entry`);
    return { name, dir, entry };
  });
  return { version, dirty, entries };
}

/**
 * Produces every artefact. `dryRun` turns the release's preconditions (a clean tree, no pending
 * changesets, a changelog entry per package) into warnings; nothing is ever published.
 */
function release(root, { dryRun = false, out, build = true, log = console.log } = {}) {
  const problems = [];
  const warn = (message) => {
    problems.push(message);
    log(`${dryRun ? 'warning' : 'error'}: ${message}`);
  };

  const { version, dirty, entries } = preconditions(root, warn);
  if (!dryRun && problems.length > 0)
    throw new Error(`not releasing ${version}: ${problems.length} problem(s) above`);

  const target = path.resolve(out ?? path.join(root, 'release', version));
  fs.rmSync(target, { recursive: true, force: true });
  for (const sub of ['npm', 'python', 'php', 'server'])
    fs.mkdirSync(path.join(target, sub), { recursive: true });
  log(
    `release ${version}${dryRun ? ' (dry run)' : ''} into ${path.relative(root, target) || target}`,
  );

  if (build) {
    run(
      'pnpm',
      [
        'turbo',
        'run',
        'build',
        '--filter=@platform/server...',
        '--filter=@platform/client...',
        '--filter=@platform/sync...',
        '--output-logs=errors-only',
      ],
      { cwd: root },
    );
  }
  const artefacts = [];
  const record = (kind, name, dir) => {
    for (const file of fs.readdirSync(dir).sort())
      artefacts.push({ kind, package: name, file: path.join(dir, file) });
  };

  packNpm(root, target, artefacts);

  buildPython(root, target);
  record('python distribution', 'platform-api (PyPI)', path.join(target, 'python'));

  archivePhp(root, target, version);
  record('php package archive', 'platform/platform-api (Packagist)', path.join(target, 'php'));

  const files = writeImageContext(root, target, version);
  record('server image build context', '@platform/server', path.join(target, 'server'));

  writeChangelog(target, version, entries);

  const listed = artefacts.map(({ kind, package: name, file }) => ({
    file: path.relative(target, file),
    kind,
    package: name,
    bytes: fs.statSync(file).size,
    sha256: sha256(file),
  }));
  const manifest = {
    version,
    dryRun,
    commit: git(root, ['rev-parse', 'HEAD']),
    dirty,
    createdAt: new Date().toISOString(),
    artefacts: listed,
    changelog: 'CHANGELOG.md',
    problems,
  };
  fs.writeFileSync(path.join(target, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  fs.writeFileSync(
    path.join(target, 'SHA256SUMS'),
    listed.map((a) => `${a.sha256}  ${a.file}\n`).join(''),
  );
  return { version, target, manifest, contextFiles: files.length };
}

module.exports = { release, changelogEntry, imageContextFiles, pendingChangesets };

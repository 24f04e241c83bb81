// What a module's mutation score depends on, and one hash of it all, so that a score measured
// once can be trusted until any of it changes (tooling/mutation/ledger.json).
//
// A module's inputs are:
// - the mutated file and its test files, and every file of the repository they load, followed
//   through relative imports and `@platform/*` workspace imports (a workspace package counts
//   whole: its every tracked file but its own tests, whatever the import picks from it);
// - the Jest configuration Stryker runs the tests with, as evaluated (tooling/mutation's
//   jest.config.js over the package's), not the bytes of the file that builds it: what a CI run
//   selects with PLATFORM_TEST_DEPLOYMENT does not reach Stryker and rescores nothing; the files
//   that configuration names (global setup, setup files, moduleNameMapper targets) and what they
//   load;
// - the package's package.json and every tracked .json file beside a loaded file's package
//   (fixtures and generated documents that tests read from disk);
// - the configuration every run shares: the shared Jest preset and the hermetic guard, the
//   Stryker options, the module's own entry in modules.js (not the others'), the conformance
//   vectors and the lockfile (every third-party package's version).
//
// Never inputs: the ledger itself, modules.js (each module's entry is hashed on its own), docs
// (*.md) and turbo.json files, which no test loads.
//
// It errs on the side of more: a file counted that a test does not really need costs a rerun,
// a file missed would let a stale score through.
'use strict';
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const CODE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/;
const JEST_CONFIG = /\/jest(?:\.[\w-]+)?\.config\.js$/;
const TEST = /\.(?:spec|e2e-spec|test)\.(?:ts|tsx|js|mjs|cjs)$/;
const RESOLVE_SUFFIXES = [
  '',
  '.ts',
  '.tsx',
  '.js',
  '.mjs',
  '.cjs',
  '.json',
  '/index.ts',
  '/index.js',
];
// import … from 'x'; export … from 'x'; import 'x'; import('x'); require('x');
// jest.mock('x'), jest.requireActual('x'), require.resolve('x').
const SPECIFIER =
  /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire(?:\.resolve)?\s*\(\s*|\bjest\.(?:mock|requireActual|requireMock)\s*\(\s*)['"]([^'"\n]+)['"]/g;

/** Files every module's score depends on, whatever it imports (paths from the repository root). */
const NOT_INPUTS = new Set(['tooling/mutation/ledger.json', 'tooling/mutation/modules.js']);
const isInput = (file) =>
  !NOT_INPUTS.has(file) && !file.endsWith('.md') && path.posix.basename(file) !== 'turbo.json';
/** Variables that choose a deployment; a score is always measured without them (bin/mutation.js). */
const DEPLOYMENT_VARIABLES = ['PLATFORM_TEST_DEPLOYMENT', 'TEST_DATABASE_URL', 'TEST_REDIS_URL'];

const SHARED_INPUTS = [
  'pnpm-lock.yaml',
  'tooling/mutation/stryker-options.js',
  'tooling/mutation/jest.config.js',
  'tooling/jest/',
  'tooling/hermetic/',
  'conformance/',
];

/** The repository's tracked files (a set of paths from its root). */
function trackedFiles(repo) {
  const result = spawnSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: repo, encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`git ls-files: ${result.stderr.trim()}`);
  return new Set(result.stdout.split('\0').filter(Boolean));
}

/** name → directory of each workspace package that has a package.json among the tracked files. */
function workspacePackages(repo, tracked) {
  const packages = new Map();
  for (const file of tracked) {
    if (path.basename(file) !== 'package.json' || file.includes('node_modules/')) continue;
    const dir = path.dirname(file);
    if (dir === '.') continue;
    let name;
    try {
      name = JSON.parse(fs.readFileSync(path.join(repo, file), 'utf8')).name;
    } catch {
      continue;
    }
    if (typeof name === 'string' && !packages.has(name)) packages.set(name, dir);
  }
  return packages;
}

/** The workspace package directory a file belongs to (the longest that contains it), or null. */
function packageOf(file, packageDirs) {
  let best = null;
  for (const dir of packageDirs) {
    if (file.startsWith(`${dir}/`) && (!best || dir.length > best.length)) best = dir;
  }
  return best;
}

function specifiers(source) {
  const found = [];
  for (const match of source.matchAll(SPECIFIER)) found.push(match[1]);
  return found;
}

/**
 * The Jest configuration a module's tests run under in Stryker, evaluated as its jest.config.js
 * would be there (no deployment variables), with the repository's own path written `<repo>`.
 */
function jestConfigOf(mod, repo) {
  const mutationConfig = path.join(repo, 'tooling/mutation/jest.config.js');
  const file = fs.existsSync(mutationConfig)
    ? mutationConfig
    : path.join(repo, mod.package, 'jest.config.js');
  if (!fs.existsSync(file)) return null;
  // In a process of its own: a fresh module registry, and an environment without the variables.
  const env = { ...process.env, PLATFORM_MUTATION_MODULE: mod.name };
  for (const name of DEPLOYMENT_VARIABLES) delete env[name];
  const result = spawnSync(
    process.execPath,
    ['-e', 'process.stdout.write(JSON.stringify(require(process.argv[1])))', file],
    { cwd: repo, env, encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`evaluating ${file}: ${result.stderr.trim()}`);
  return JSON.parse(result.stdout.split(repo).join('<repo>'));
}

/** The repository files a module's evaluated Jest configuration names (`<rootDir>/…` or a path). */
function jestConfigFiles(mod, repo) {
  const config = jestConfigOf(mod, repo);
  if (!config) return [];
  const files = [];
  const visit = (value) => {
    if (typeof value === 'string') {
      const rooted = value.match(/^<rootDir>\/(.+)$/);
      const inRepo = value.match(/^<repo>\/(.+)$/);
      if (rooted) files.push(path.posix.normalize(path.posix.join(mod.package, rooted[1])));
      if (inRepo) files.push(path.posix.normalize(inRepo[1]));
    } else if (value && typeof value === 'object') {
      for (const inner of Object.values(value)) visit(inner);
    }
  };
  visit(config);
  return files;
}

/**
 * Every input of a module (sorted paths from the repository root).
 * @param {{ mutate: string, tests: string[], package: string }} mod
 * @param {{ repo: string, tracked?: Set<string> }} options
 */
function moduleInputs(mod, { repo, tracked = trackedFiles(repo) }) {
  const packages = workspacePackages(repo, tracked);
  const packageDirs = [...packages.values()];
  const inputs = new Set();
  const queue = [];
  const add = (file) => {
    if (!tracked.has(file) || inputs.has(file) || !isInput(file)) return;
    inputs.add(file);
    if (CODE.test(file)) queue.push(file);
  };
  const addTree = (dir, keep = () => true) => {
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    for (const file of tracked) if (file.startsWith(prefix) && keep(file)) add(file);
  };
  const resolveRelative = (from, specifier) => {
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
    // `./x.js` written for ESM output may stand for ./x.ts.
    const stems = [base, base.replace(/\.(?:js|mjs|cjs)$/, '')];
    for (const stem of stems) {
      for (const suffix of RESOLVE_SUFFIXES) if (tracked.has(stem + suffix)) return stem + suffix;
    }
    return null;
  };

  add(mod.mutate);
  for (const test of mod.tests) add(test);
  for (const shared of SHARED_INPUTS) {
    if (shared.endsWith('/'))
      addTree(shared, (f) => !TEST.test(f) && !JEST_CONFIG.test(f) && !f.includes('/test/'));
    else add(shared);
  }
  for (const file of jestConfigFiles(mod, repo)) add(file);

  const packagesSeen = new Set();
  while (queue.length) {
    const file = queue.shift();
    const pkg = packageOf(file, packageDirs);
    if (pkg && !packagesSeen.has(pkg)) {
      packagesSeen.add(pkg);
      // package.json (read for versions) and the JSON a test may read from disk.
      addTree(pkg, (f) => f.endsWith('.json') && !f.includes('/node_modules/'));
    }
    const source = fs.readFileSync(path.join(repo, file), 'utf8');
    for (const specifier of specifiers(source)) {
      if (specifier.startsWith('.')) {
        const resolved = resolveRelative(file, specifier);
        if (resolved) add(resolved);
        continue;
      }
      const name = specifier.startsWith('@')
        ? specifier.split('/').slice(0, 2).join('/')
        : specifier.split('/')[0];
      const dir = packages.get(name);
      // A workspace package whole (but its own tests); anything else is in the lockfile.
      // Its Jest configs run its own suites, not the importer's.
      if (dir)
        addTree(dir, (f) => !TEST.test(f) && !JEST_CONFIG.test(f) && !f.includes('/node_modules/'));
    }
  }
  return [...inputs].sort();
}

/**
 * One hash of a module's inputs: their paths and contents, and what its entry in modules.js says
 * is mutated and tested (not its threshold: a score is compared with today's threshold).
 */
function moduleHash(mod, { repo, tracked }) {
  const files = moduleInputs(mod, { repo, tracked });
  const hash = crypto.createHash('sha256');
  const { mutate, tests, package: pkg } = mod;
  hash.update(`module ${JSON.stringify({ mutate, tests, package: pkg })}\n`);
  hash.update(`jest ${JSON.stringify(jestConfigOf(mod, repo))}\n`);
  for (const file of files) {
    const content = fs.readFileSync(path.join(repo, file));
    hash.update(`${file}\0${crypto.createHash('sha256').update(content).digest('hex')}\n`);
  }
  return { hash: hash.digest('hex'), files };
}

module.exports = { DEPLOYMENT_VARIABLES, jestConfigOf, moduleHash, moduleInputs, trackedFiles };

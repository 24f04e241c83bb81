// The mutation ledger rescores exactly the modules whose inputs changed: a change to what a
// module's tests load (not the module itself) makes it stale, a change anywhere else does not.
// Each case builds a small git repository of its own, shaped like this one.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { moduleInputs, trackedFiles } = require('../src/inputs');
const { planModules, readLedger, writeLedger } = require('../src/ledger');

const GUARD = {
  name: 'guard',
  mutate: 'apps/app/src/guard.ts',
  package: 'apps/app',
  tests: ['apps/app/src/guard.spec.ts', 'apps/app/test/guard.e2e-spec.ts'],
};
const SIGNER = {
  name: 'signer',
  mutate: 'packages/sdk/src/signer.ts',
  package: 'packages/sdk',
  tests: ['packages/sdk/src/signer.spec.ts'],
};

/** The package's Jest config: its own settings, and a file list only a CI deployment run uses. */
const JEST_CONFIG = (deploymentFiles, timeout = 5000) =>
  `const deployment = process.env.PLATFORM_TEST_DEPLOYMENT;
module.exports = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  testTimeout: ${timeout},
  ...(deployment && { testMatch: Array.from({ length: ${deploymentFiles} }, (_, i) => 'f' + i) }),
};
`;

const FILES = {
  'package.json': '{ "name": "root", "private": true }\n',
  'pnpm-lock.yaml': "lockfileVersion: '9.0'\n",
  'README.md': '# fixture\n',
  'tooling/jest/index.js': 'module.exports = {};\n',
  'apps/app/package.json': '{ "name": "@fixture/app" }\n',
  'apps/app/jest.config.js': JEST_CONFIG(2),
  'apps/app/test/support/global-setup.ts':
    "import { template } from './template';\nexport default () => template();\n",
  'apps/app/test/support/template.ts': 'export const template = () => 1;\n',
  'apps/app/src/guard.ts':
    "import { policy } from './policy';\nexport const guard = (x: number) => policy(x) > 0;\n",
  'apps/app/src/policy.ts':
    "import { weight } from '@fixture/lib';\nexport const policy = (x: number) => x * weight;\n",
  'apps/app/src/unrelated.ts': 'export const unrelated = 1;\n',
  'apps/app/src/guard.spec.ts': "import { guard } from './guard';\ntest('g', () => guard(1));\n",
  'apps/app/test/guard.e2e-spec.ts':
    "const { boot } = require('../src/app.js');\ntest('e2e', () => boot());\n",
  'apps/app/src/app.ts':
    "import { guard } from './guard';\nexport { routes } from './routes';\nexport const boot = () => guard(2);\n",
  'apps/app/src/routes.ts': 'export const routes = [];\n',
  'packages/lib/package.json': '{ "name": "@fixture/lib" }\n',
  'packages/lib/src/index.ts': "export { weight } from './weight';\n",
  'packages/lib/src/weight.ts': 'export const weight = 2;\n',
  'packages/lib/src/weight.spec.ts': "test('w', () => {});\n",
  'packages/sdk/package.json': '{ "name": "@fixture/sdk" }\n',
  'packages/sdk/src/signer.ts': 'export const sign = (s: string) => s;\n',
  'packages/sdk/src/signer.spec.ts':
    "import { sign } from './signer';\nimport vectors from '../vectors.json';\ntest('s', () => sign(vectors.a));\n",
  'packages/sdk/vectors.json': '{ "a": "x" }\n',
};

let repo;
beforeEach(() => {
  repo = fs.mkdtempSync(path.join(os.tmpdir(), 'mutation-ledger-'));
  for (const [file, content] of Object.entries(FILES)) write(file, content);
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.test', 'commit', '-qm', 'fixture');
});
afterEach(() => fs.rmSync(repo, { recursive: true, force: true }));

function write(file, content) {
  fs.mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
  fs.writeFileSync(path.join(repo, file), content);
}
function git(...args) {
  const result = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(result.stderr);
}
function plan(ledger) {
  return planModules([GUARD, SIGNER], ledger, { repo, tracked: trackedFiles(repo) });
}
/** The ledger as a green run on today's tree would leave it. */
function recordAll() {
  const ledger = {};
  for (const p of plan({})) {
    ledger[p.mod.name] = { hash: p.hash, score: 90, detected: 9, mutants: 10, minutes: 1 };
  }
  return ledger;
}
const stale = (ledger) =>
  plan(ledger)
    .filter((p) => !p.current)
    .map((p) => p.mod.name);

test("a module's inputs follow imports, workspace packages and the Jest setup, and stop there", () => {
  expect(moduleInputs(GUARD, { repo })).toEqual([
    'apps/app/package.json',
    'apps/app/src/app.ts',
    'apps/app/src/guard.spec.ts',
    'apps/app/src/guard.ts',
    'apps/app/src/policy.ts',
    'apps/app/src/routes.ts',
    'apps/app/test/guard.e2e-spec.ts',
    'apps/app/test/support/global-setup.ts',
    'apps/app/test/support/template.ts',
    'packages/lib/package.json',
    'packages/lib/src/index.ts',
    'packages/lib/src/weight.ts',
    'pnpm-lock.yaml',
    'tooling/jest/index.js',
  ]);
});

test('a fresh ledger leaves nothing to rescore, the ledger itself and the module list included', () => {
  const ledger = recordAll();
  fs.mkdirSync(path.join(repo, 'tooling/mutation'), { recursive: true });
  writeLedger(ledger, path.join(repo, 'tooling/mutation/ledger.json'));
  write('tooling/mutation/modules.js', 'module.exports = { MODULES: [] };\n');
  git('add', '-A');
  expect(stale(ledger)).toEqual([]);
});

test('the Jest config counts as Stryker evaluates it: a deployment-only change rescores nothing', () => {
  const ledger = recordAll();
  write('apps/app/jest.config.js', JEST_CONFIG(3));
  expect(stale(ledger)).toEqual([]);
  write('apps/app/jest.config.js', JEST_CONFIG(3, 9000));
  expect(stale(ledger)).toEqual(['guard']);
});

test('a score does not depend on the deployment variables of the shell that hashes it', () => {
  const ledger = recordAll();
  process.env.PLATFORM_TEST_DEPLOYMENT = 'redis';
  process.env.TEST_DATABASE_URL = 'postgres://127.0.0.1:1/x';
  try {
    expect(stale(ledger)).toEqual([]);
  } finally {
    delete process.env.PLATFORM_TEST_DEPLOYMENT;
    delete process.env.TEST_DATABASE_URL;
  }
});

test('a change to a dependency of the module (not the module) rescores that module only', () => {
  const ledger = recordAll();
  write('apps/app/src/policy.ts', 'export const policy = (x: number) => x * 3;\n');
  expect(stale(ledger)).toEqual(['guard']);
});

test('a change inside a workspace package the tests import, or its test setup, rescores it', () => {
  const ledger = recordAll();
  write('packages/lib/src/weight.ts', 'export const weight = 3;\n');
  expect(stale(ledger)).toEqual(['guard']);
  const again = recordAll();
  write('apps/app/test/support/template.ts', 'export const template = () => 2;\n');
  expect(stale(again)).toEqual(['guard']);
});

test('a JSON fixture a test reads, and the lockfile, count as inputs', () => {
  const ledger = recordAll();
  write('packages/sdk/vectors.json', '{ "a": "y" }\n');
  expect(stale(ledger)).toEqual(['signer']);
  write('pnpm-lock.yaml', "lockfileVersion: '9.1'\n");
  expect(stale(ledger)).toEqual(['guard', 'signer']);
});

test('a change elsewhere (a file no test loads, docs, a test of another package) rescores nothing', () => {
  const ledger = recordAll();
  write('apps/app/src/unrelated.ts', 'export const unrelated = 2;\n');
  write('README.md', '# changed\n');
  write('packages/lib/src/weight.spec.ts', "test('w2', () => {});\n");
  expect(stale(ledger)).toEqual([]);
});

test('a new file the module starts importing counts before it is committed', () => {
  const ledger = recordAll();
  write('apps/app/src/extra.ts', 'export const extra = 1;\n');
  expect(stale(ledger)).toEqual([]);
  write(
    'apps/app/src/guard.ts',
    "import { policy } from './policy';\nimport { extra } from './extra';\nexport const guard = (x: number) => policy(x) > extra;\n",
  );
  const [guard] = plan(ledger);
  expect(guard.current).toBe(false);
  expect(guard.files).toContain('apps/app/src/extra.ts');
});

test('the ledger is written sorted and read back as written', () => {
  const file = path.join(repo, 'ledger.json');
  const ledger = recordAll();
  writeLedger({ signer: ledger.signer, guard: ledger.guard }, file);
  expect(Object.keys(readLedger(file))).toEqual(['guard', 'signer']);
  expect(readLedger(file)).toEqual(ledger);
  expect(readLedger(path.join(repo, 'missing.json'))).toEqual({});
});

test('a changed test list in modules.js rescores the module', () => {
  const ledger = recordAll();
  const [guard] = planModules([{ ...GUARD, tests: [GUARD.tests[0]] }], ledger, {
    repo,
    tracked: trackedFiles(repo),
  });
  expect(guard.current).toBe(false);
});

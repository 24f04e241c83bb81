/**
 * `pnpm gen resource <name>` (tooling/generators): in a fresh clone of HEAD, the generated resource
 * builds and passes its own e2e test, the contract walk and the field checks before any hand edit.
 * The SDKs are not regenerated here (PLATFORM_GEN_SKIP_SDKS): what is checked is the code the
 * generator writes and registers, not the codegen it then runs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const REPO = path.join(__dirname, '..', '..', '..');

interface JestReport {
  numFailedTests: number;
  numPassedTests: number;
  testResults: { name: string; assertionResults: { status: string; fullName: string }[] }[];
}

describe('pnpm gen resource', () => {
  let copy: string;

  beforeAll(() => {
    copy = path.join(mkdtempSync(path.join(tmpdir(), 'platform-gen-')), 'repo');
  });
  afterAll(() => rmSync(path.dirname(copy), { recursive: true, force: true }));

  /** Runs a command in the copy with this Node first on PATH; throws with its output on failure. */
  function run(cwd: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('JEST_')),
    );
    try {
      return execFileSync(command, args, {
        cwd,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...clean,
          PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
          ...env,
        },
        maxBuffer: 64 * 1024 * 1024,
      });
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string; message: string };
      throw new Error(`${command} ${args.join(' ')} failed:\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
    }
  }

  it('writes a resource that, with a field and a reference added by hand in its own files, builds and passes its e2e test, the contract walk, the field checks, exports and the refusal', () => {
    run(REPO, 'git', ['clone', '--quiet', '--shared', REPO, copy]);
    run(copy, 'pnpm', ['install', '--offline', '--frozen-lockfile', '--reporter=silent']);
    run(copy, 'pnpm', ['gen', 'resource', 'widgets', 'wdg'], { PLATFORM_GEN_SKIP_SDKS: '1' });

    expect(existsSync(path.join(copy, 'apps/server/src/widgets/widgets.service.ts'))).toBe(true);
    expect(readFileSync(path.join(copy, 'packages/contract/src/registry.ts'), 'utf8')).toContain(
      "prefix: 'wdg',",
    );
    run(copy, 'git', ['add', '-A']);
    run(copy, 'git', ['-c', 'user.name=gen', '-c', 'user.email=gen@test', 'commit', '-qm', 'gen']);

    // docs/adding-a-resource.md, by hand: a plain field (`color`) and a reference to students.
    addFieldAndReference(copy);
    const touched = run(copy, 'git', ['diff', '--name-only']).trim().split('\n');
    expect(touched.filter((file) => !RESOURCE_OWN_FILES.test(file))).toEqual([]);

    const server = typecheck(copy, run);

    const report = path.join(copy, 'jest-report.json');
    run(server, process.execPath, [
      require.resolve('jest/bin/jest', { paths: [server] }),
      '--ci',
      '--json',
      `--outputFile=${report}`,
      'test/widgets.e2e-spec.ts',
      'test/contract-walk.e2e-spec.ts',
      'src/common/list/contract-fields.spec.ts',
      // A student's delete refusal now names widgets; exports and checksums read them.
      'test/students-courses.e2e-spec.ts',
      'test/exports.e2e-spec.ts',
    ]);
    const results = JSON.parse(readFileSync(report, 'utf8')) as JestReport;
    expect(results.numFailedTests).toBe(0);
    const suites = Object.fromEntries(
      results.testResults.map((s) => [path.basename(s.name), s.assertionResults.length]),
    );
    expect(suites['widgets.e2e-spec.ts']).toBeGreaterThanOrEqual(3);
    expect(suites['contract-walk.e2e-spec.ts']).toBeGreaterThan(100);
    expect(suites['contract-fields.spec.ts']).toBeGreaterThan(0);
    // The walk covered the new routes (it fails for a collection without a fixture).
    const walked = results.testResults
      .flatMap((s) => s.assertionResults)
      .filter((a) => a.fullName.includes('/v1/widgets'));
    expect(walked.length).toBeGreaterThan(5);
    expect(walked.every((a) => a.status === 'passed')).toBe(true);
    // The walk sent another organization's student as the widget's reference, and was refused.
    expect(walked.some((a) => a.fullName.includes('POST /v1/widgets as organization B'))).toBe(
      true,
    );
  }, 900_000);
});

/**
 * It builds: the server's build settings type-check the server and the contract's source in one
 * program, declarations included (what `tsc -b` and tsup's dts step would report). Returns the
 * server's folder in the copy.
 */
function typecheck(
  copy: string,
  run: (cwd: string, command: string, args: string[]) => string,
): string {
  // The suites run from source, as Jest does here; only Jest's global setup and teardown load
  // the contract's CommonJS bundle, which tsup writes in seconds without its declarations.
  run(copy, 'pnpm', [
    '--filter',
    '@platform/contract',
    'exec',
    'tsup',
    '--format',
    'cjs',
    '--no-dts',
    '--no-sourcemap',
  ]);
  const server = path.join(copy, 'apps', 'server');
  writeFileSync(
    path.join(server, 'tsconfig.generated-check.json'),
    JSON.stringify({
      extends: './tsconfig.build.json',
      compilerOptions: {
        emitDeclarationOnly: true,
        declaration: true,
        noEmit: false,
        outDir: path.join(path.dirname(copy), 'declarations'),
        rootDir: '../..',
        tsBuildInfoFile: null,
        paths: { '@platform/contract': ['../../packages/contract/src/index.ts'] },
      },
    }),
  );
  run(server, process.execPath, [
    require.resolve('typescript/bin/tsc', { paths: [server] }),
    '-p',
    'tsconfig.generated-check.json',
  ]);
  return server;
}

/** The files a resource owns: the registry entries, its contract module, its folder, its test. */
const RESOURCE_OWN_FILES =
  /^(packages\/contract\/src\/(registry|widgets)\.ts|apps\/server\/src\/widgets\/.*|apps\/server\/test\/widgets\.e2e-spec\.ts)$/;

/** Replaces `from` (which must occur) with `to` in `file` under `root`. */
function edit(root: string, file: string, from: string | RegExp, to: string): void {
  const full = path.join(root, file);
  const text = readFileSync(full, 'utf8');
  const next = text.replace(from, to);
  if (next === text) throw new Error(`${file}: found no ${String(from)} to edit`);
  writeFileSync(full, next);
}

/**
 * The guide's hand edits for a plain field (the contract's schema and `<singular>Fields`, the
 * entity, the migration) and an optional reference to students (the same three, the registry
 * entry's `references`, the service's check and the module's import).
 */
function addFieldAndReference(root: string): void {
  addToContract(root);
  addToServer(root);
}

function addToContract(root: string): void {
  const contract = 'packages/contract/src/widgets.ts';
  edit(
    root,
    contract,
    '    notes: z.string().nullable(),\n',
    "    notes: z.string().nullable(),\n    color: z.string().nullable(),\n    student_id: idSchema('student').nullable(),\n",
  );
  edit(
    root,
    contract,
    '  notes: text(5000).nullable(),\n',
    "  notes: text(5000).nullable(),\n  color: text(32).nullable(),\n  student_id: idSchema('student').nullable(),\n",
  );
  edit(
    root,
    contract,
    '    notes: widgetFields.notes.optional(),\n',
    '    notes: widgetFields.notes.optional(),\n    color: widgetFields.color.optional(),\n    student_id: widgetFields.student_id.optional(),\n',
  );
  edit(
    root,
    contract,
    'filters: { status: filter.oneOf(WIDGET_STATUSES) },',
    "filters: { status: filter.oneOf(WIDGET_STATUSES), student_id: filter.id('student') },",
  );
  edit(
    root,
    'packages/contract/src/registry.ts',
    /(prefix: 'wdg',[\s\S]*?references: )\[\]/,
    "$1['students']",
  );
}

function addToServer(root: string): void {
  const entity = 'apps/server/src/widgets/widget.entity.ts';
  edit(
    root,
    entity,
    '  notes: string | null;\n',
    "  notes: string | null;\n\n  @Column({ type: 'varchar', length: 32, nullable: true })\n  color: string | null;\n\n  @Column({ name: 'student_id', type: 'varchar', length: 32, nullable: true })\n  studentId: string | null;\n",
  );
  const migrations = path.join(root, 'apps/server/src/widgets/migrations');
  const migration = path.join('apps/server/src/widgets/migrations', readdirSync(migrations)[0]!);
  edit(
    root,
    migration,
    "      'notes text',\n",
    "      'notes text',\n      'color varchar(32)',\n      'student_id varchar(32) REFERENCES students (id)',\n",
  );
  edit(
    root,
    migration,
    '    ...organizationListIndexes(',
    '    `CREATE INDEX idx_widgets_student ON widgets (student_id, created_at)`,\n    ...organizationListIndexes(',
  );
  const service = 'apps/server/src/widgets/widgets.service.ts';
  edit(
    root,
    service,
    "import { Widget } from './widget.entity';",
    "import { StudentsService } from '../students/students.service';\nimport { Widget } from './widget.entity';",
  );
  edit(
    root,
    service,
    /owned: OwnedRecordsFactory,?/,
    'owned: OwnedRecordsFactory, private readonly students: StudentsService,',
  );
  edit(
    root,
    service,
    /return this\.records\.create\(principal\.organizationId, \(\) =>\s*this\.records\.fromBody\(input, WidgetCreateSchema\),?\s*\);/,
    "return this.records.create(principal.organizationId, async (manager) => {\n      const { student_id } = input;\n      if (student_id) await this.students.referenced(manager, principal, { student_id }, 'student_id');\n      return this.records.fromBody(input, WidgetCreateSchema);\n    });",
  );
  const module = 'apps/server/src/widgets/widgets.module.ts';
  edit(
    root,
    module,
    "import { TypeOrmModule } from '@nestjs/typeorm';",
    "import { TypeOrmModule } from '@nestjs/typeorm';\nimport { StudentsModule } from '../students/students.module';",
  );
  edit(
    root,
    module,
    'imports: [TypeOrmModule.forFeature([Widget])],',
    'imports: [TypeOrmModule.forFeature([Widget]), StudentsModule],',
  );
}

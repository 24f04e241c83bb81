import { mkdtempSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { drift, EMITTERS, loadModel, render, write, type Emitter } from '../src/generate';

describe('generated files', () => {
  it('match the contract (regenerate with: pnpm generate:sdks)', () => {
    const result = drift(render(loadModel()));
    expect(result).toEqual({ changed: [], stale: [] });
  });

  it('are rewritten when they differ, and files an emitter no longer writes are removed', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'sdk-codegen-'));
    const emitter: Emitter = {
      name: 'fixture',
      ownedDirs: ['out'],
      emit: () => new Map([['out/kept.txt', 'new\n']]),
    };
    mkdirSync(path.join(root, 'out'));
    writeFileSync(path.join(root, 'out/kept.txt'), 'old\n');
    writeFileSync(path.join(root, 'out/removed.txt'), 'gone\n');
    const files = render(loadModel(), [emitter]);
    expect(drift(files, root, [emitter])).toEqual({
      changed: ['out/kept.txt'],
      stale: ['out/removed.txt'],
    });
    write(files, root, [emitter]);
    expect(existsSync(path.join(root, 'out/removed.txt'))).toBe(false);
    expect(drift(files, root, [emitter])).toEqual({ changed: [], stale: [] });
  });

  it('cover every operation of the contract in the reference, in all three languages', () => {
    const model = loadModel();
    const reference = render(
      model,
      EMITTERS.filter((e) => e.name === 'reference'),
    ).get('docs/api-reference.md')!;
    for (const operation of model.operations) {
      expect(reference).toContain(
        `platform.${operation.resource.camel}.${operation.method.camel}(`,
      );
      expect(reference).toContain(
        `$client->${operation.resource.camel}->${operation.method.camel}(`,
      );
      expect(reference).toContain(`client.${operation.resource.snake}.${operation.method.snake}(`);
    }
  });
});

describe('TypeScript list query types', () => {
  const typesOf = (model: ReturnType<typeof loadModel>): string =>
    render(
      model,
      EMITTERS.filter((e) => e.name === 'typescript'),
    ).get('packages/client/src/generated/types.ts')!;

  it('declare the parameters every list takes once, and each list extends them', () => {
    const model = loadModel();
    const types = typesOf(model);
    const lists = model.operations.filter((op) => op.query.some((p) => p.name === 'cursor'));
    expect(lists.length).toBeGreaterThan(5);
    expect(types.match(/^\s+cursor\?: string;$/gm)).toHaveLength(1);
    for (const op of lists) {
      expect(types).toMatch(
        new RegExp(
          `export interface ${op.resource.camel}\\w*ListQuery extends ListPageQuery\\b`,
          'i',
        ),
      );
    }
  });

  it('keep a list inline whose own version of a shared parameter differs', () => {
    const model = loadModel();
    const list = model.operations.find((op) => op.id === 'students.list')!;
    const perPage = list.query.find((p) => p.name === 'per_page')!;
    perPage.description = 'Items per page, at most 10.';
    const types = typesOf(model);
    const own = types.slice(types.indexOf('export interface StudentsListQuery'));
    expect(own.slice(0, own.indexOf('\n}'))).toContain('Items per page, at most 10.');
    expect(own).not.toMatch(/^export interface StudentsListQuery extends ListPageQuery/);
    expect(types).toMatch(/export interface CoursesListQuery extends ListPageQuery/);
  });

  it('declare the fields every event shares once, as EventFields, which each event extends', () => {
    const model = loadModel();
    const types = typesOf(model);
    const events = model.unions.find((u) => u.name === 'Event')!.members;
    expect(events.length).toBeGreaterThan(10);
    expect(types.match(/^\s+position: number \| null;$/gm)).toHaveLength(1);
    for (const name of events)
      expect(types).toContain(`export interface ${name} extends EventFields {`);
  });
});

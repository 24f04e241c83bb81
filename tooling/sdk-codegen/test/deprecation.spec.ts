/**
 * An operation the OpenAPI document marks deprecated (as the contract's generator writes it:
 * `deprecated: true` and `x-deprecation`) is documented as such in the generated PHP and Python
 * methods. Nothing in the real API is deprecated, so a copy of the document is marked here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fromOpenApi } from '../src/from-openapi';
import { emitPhp } from '../src/php';
import { emitPython } from '../src/python';
import { emitTypeScript } from '../src/typescript';

type Json = Record<string, any>;

const DEPRECATION = {
  since: '2026-01-01',
  sunset: '2027-01-01',
  replacement: '`students.list`',
  link: 'https://docs.school.test/migrate',
};

function markedDocument(): Json {
  const document = JSON.parse(
    readFileSync(path.join(__dirname, '../../../packages/contract/openapi.json'), 'utf8'),
  ) as Json;
  const retrieve = document.paths['/v1/students/{id}'].get;
  Object.assign(retrieve, { deprecated: true, 'x-deprecation': DEPRECATION });
  const status = document.paths['/v1/students'].get.parameters.find(
    (p: Json) => p.name === 'status',
  );
  Object.assign(status, { deprecated: true, 'x-deprecation': { since: '2026-02-01' } });
  Object.assign(document.components.schemas.StudentCreate.properties.preferred_name, {
    deprecated: true,
    'x-deprecation': { since: '2026-03-01' },
  });
  return document;
}

describe('deprecated operations in the generated SDKs', () => {
  const model = fromOpenApi(markedDocument());
  const op = (id: string) => model.operations.find((o) => o.id === id)!;

  it('reads the marks and dates of operations, parameters and fields', () => {
    expect(op('students.retrieve').deprecated).toEqual(DEPRECATION);
    expect(op('students.create').deprecated).toBeUndefined();
    expect(op('students.list').query.find((q) => q.name === 'status')!.deprecated).toEqual({
      since: '2026-02-01',
    });
    const create = model.models.find((m) => m.name === 'StudentCreate')!;
    expect(create.fields.find((f) => f.name === 'preferred_name')!.deprecated).toEqual({
      since: '2026-03-01',
    });
  });

  it('gives the PHP methods (parsed and raw) a @deprecated tag, and no other method', () => {
    const php = emitPhp(model);
    const tag =
      '@deprecated since 2026-01-01; it stops working after 2027-01-01. Use `students.list` instead.';
    for (const file of ['StudentsService.php', 'StudentsRawService.php']) {
      const source = php.get(`packages/client-php/src/Service/${file}`)!;
      expect(source.split('@deprecated').length - 1).toBe(1);
      const method = source.slice(source.indexOf(tag), source.indexOf('public function retrieve'));
      expect(method).toContain(tag);
      expect(method).toContain('https://docs.school.test/migrate');
      expect(method).not.toContain('public function');
    }
  });

  it('gives the Python methods (parsed and raw, sync and async) a deprecated note, and no other method', () => {
    const python = emitPython(model);
    const source = python.get('packages/client-python/src/platform_api/resources/students.py')!;
    const note =
      '.. deprecated:: 2026-01-01\n            This operation is deprecated since 2026-01-01; it stops working after 2027-01-01.';
    expect(source.split('.. deprecated::').length - 1).toBe(4);
    const retrieve = source.indexOf('def retrieve(');
    expect(source.indexOf(note, retrieve)).toBeGreaterThan(retrieve);
    expect(source.indexOf(note, retrieve)).toBeLessThan(source.indexOf('def ', retrieve + 1));
  });

  it('gives the TypeScript method, query parameter and body field a @deprecated tag, and nothing else', () => {
    const ts = emitTypeScript(model);
    const routes = ts.get('packages/client/src/generated/routes.ts')!;
    const types = ts.get('packages/client/src/generated/types.ts')!;
    // Editors strike a name through when its JSDoc has @deprecated: the retrieve method only
    // (besides the SDK aliases of the feed, tested below).
    const start = routes.indexOf('export interface StudentsResource');
    const students = routes.slice(start, routes.indexOf('\n}\n', start));
    expect(students.split('@deprecated').length - 1).toBe(1);
    const tag = routes.indexOf('@deprecated', start);
    expect(routes.indexOf('retrieve(', tag)).toBeLessThan(routes.indexOf('*/', tag) + 200);
    expect(routes.slice(tag, routes.indexOf('*/', tag))).toContain('2027-01-01');
    // The status filter of students.list and preferred_name of StudentCreate.
    expect(types.split('@deprecated').length - 1).toBe(2);
    const query = types.slice(types.indexOf('export interface StudentsListQuery'));
    expect(query.slice(query.indexOf('@deprecated'))).toMatch(
      /^@deprecated[^]*?\*\/\n {2}status\?:/,
    );
    const create = types.slice(types.indexOf('export interface StudentCreate '));
    expect(create.slice(create.indexOf('@deprecated'))).toMatch(
      /^@deprecated[^]*?\*\/\n {2}preferred_name\?:/,
    );
  });

  it('leaves the real API without a deprecated method', () => {
    const real = fromOpenApi(
      JSON.parse(
        readFileSync(path.join(__dirname, '../../../packages/contract/openapi.json'), 'utf8'),
      ) as Json,
    );
    expect(real.operations.filter((o) => o.deprecated)).toEqual([]);
    // Only the SDK aliases kept for a renamed method are deprecated, and only in the SDKs.
    expect(
      real.resources
        .flatMap((r) => r.operations)
        .filter((o) => o.deprecated)
        .map((o) => `${o.resource.camel}.${o.method.camel} -> ${o.aliasOf}`),
    ).toEqual(['events.changes -> changes.list']);
  });

  it('marks the aliases kept for a renamed SDK method deprecated in all three, pointing at the new name', () => {
    const real = fromOpenApi(
      JSON.parse(
        readFileSync(path.join(__dirname, '../../../packages/contract/openapi.json'), 'utf8'),
      ) as Json,
    );
    const routes = emitTypeScript(real).get('packages/client/src/generated/routes.ts')!;
    const events = routes.slice(routes.indexOf('export interface EventsResource'));
    const eventsBody = events.slice(0, events.indexOf('\n}\n'));
    expect(eventsBody.match(/@deprecated .*/g)).toEqual([
      '@deprecated and will be removed. Use `changes.list` instead.',
      '@deprecated and will be removed. Use `changes.follow` instead.',
    ]);
    const changes = routes.slice(routes.indexOf('export interface ChangesResource'));
    expect(changes.slice(0, changes.indexOf('\n}\n'))).not.toContain('@deprecated');
    const php = emitPhp(real).get('packages/client-php/src/Service/EventsService.php')!;
    expect(php.match(/@deprecated .*/g)).toEqual([
      '@deprecated and will be removed. Use `changes.list` instead.',
      '@deprecated and will be removed. Use `changes->follow` instead.',
    ]);
    const python = emitPython(real).get(
      'packages/client-python/src/platform_api/resources/events.py',
    )!;
    // changes and follow, sync and async (follow has no raw twin; changes has two).
    expect(python.split('.. deprecated::').length - 1).toBe(6);
    expect(python).toContain('Use `changes.follow` instead; this alias will be removed.');
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { contract, listSpecOf, RESOURCE_NAMES, resourceLabel } from '@platform/contract';
import { DataSource, type EntityMetadata, type EntityTarget, type ObjectLiteral } from 'typeorm';
import type { z } from 'zod';
import { loadConfig } from '../../config/env';
import { PersonalAccessToken } from '../../auth/personal-access-token.entity';
import { dataSourceOptions } from '../../database/data-source';
import { resourceSchemas, SERVER_RESOURCES } from '../../resources';
import { APP_SCHEMA } from '../../schema';
import { resourceMapper } from '../resource-fields';
import { listFieldsFor } from './list-fields';

/**
 * Every field of every resource the domain modules serve, walked from the contract: a field added
 * to a resource, an update body, a create body or a list query that the server does not map,
 * update, store or list by fails here (the `satisfies` maps fail the typecheck as well).
 */
interface Collection {
  name: string;
  entity: EntityTarget<ObjectLiteral>;
  resource: z.AnyZodObject;
  create: z.AnyZodObject;
  update?: z.AnyZodObject;
  listQuery: object;
}

/** Every resource of the registry (`resources.ts`), with the contract's schemas for it. */
const COLLECTIONS: Collection[] = RESOURCE_NAMES.map((name) => ({
  name: resourceLabel(name),
  entity: SERVER_RESOURCES[name].entity,
  ...resourceSchemas(name),
}));

/** A row with a distinct value in every column, of the column's kind. */
function sampleRow(metadata: EntityMetadata): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  metadata.columns.forEach((column, index) => {
    const type = String(column.type);
    row[column.propertyName] =
      column.type === Date || /time/.test(type)
        ? new Date(Date.UTC(2026, 0, 1 + index))
        : /int|numeric|real|double|float/.test(type)
          ? index + 1
          : `${column.databaseName}-${index}`;
  });
  return row;
}

describe('contract fields of the domain resources', () => {
  let dir: string;
  let dataSource: DataSource;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'fields-'));
    dataSource = new DataSource(
      dataSourceOptions(
        loadConfig({ DATABASE_URL: `sqlite:${dir}/db.sqlite` }).database,
        APP_SCHEMA,
      ),
    );
    await dataSource.initialize();
    await dataSource.runMigrations({ transaction: 'each' });
  });
  afterAll(async () => {
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  describe.each(COLLECTIONS.map((c) => [c.name, c] as const))('%s', (_name, collection) => {
    it('maps every field of the resource from the column of the same name, in the schema order', () => {
      const metadata = dataSource.getMetadata(collection.entity);
      const row = sampleRow(metadata);
      const toResource = resourceMapper<Record<string, unknown>, Record<string, unknown>>(
        metadata,
        collection.resource,
      );
      const resource = toResource(row);
      expect(Object.keys(resource)).toEqual(Object.keys(collection.resource.shape));
      expect(resource.object).toBe(collection.resource.shape.object.value);
      for (const field of Object.keys(collection.resource.shape)) {
        if (field === 'object') continue;
        const column = metadata.columns.find((c) => c.databaseName === field)!;
        const stored = row[column.propertyName];
        expect(resource[field]).toEqual(stored instanceof Date ? stored.toISOString() : stored);
      }
    });

    it('gives each record its own timestamps, whether records share a Date or not', () => {
      const metadata = dataSource.getMetadata(collection.entity);
      const toResource = resourceMapper<Record<string, unknown>, Record<string, unknown>>(
        metadata,
        collection.resource,
      );
      const now = new Date(Date.UTC(2026, 4, 1, 12, 0, 0, 1));
      const earlier = new Date(Date.UTC(2025, 1, 2, 3, 4, 5, 6));
      const later = new Date(now.getTime() + 1);
      // [created, updated]: a batch's updated records (their own creation, now), its new ones.
      const stamps: [Date, Date][] = [
        [earlier, now],
        [now, now],
        [new Date(Date.UTC(2024, 0, 1)), now],
        [later, later],
        [now, now],
        [earlier, earlier],
      ];
      const resources = stamps.map(([createdAt, updatedAt]) =>
        toResource({ ...sampleRow(metadata), createdAt, updatedAt }),
      );
      expect(resources.map((r) => [r.created_at, r.updated_at])).toEqual(
        stamps.map(([created, updated]) => [created.toISOString(), updated.toISOString()]),
      );
    });

    it('has a column of the same name for every field of the create and update bodies', () => {
      const metadata = dataSource.getMetadata(collection.entity);
      const missing = (schema?: z.AnyZodObject) =>
        Object.keys(schema?.shape ?? {}).filter(
          (field) => !metadata.columns.some((c) => c.databaseName === field),
        );
      expect(missing(collection.create)).toEqual([]);
      expect(missing(collection.update)).toEqual([]);
    });

    it('lists by every field the list query filters, ranges over, sorts and searches', () => {
      const metadata = dataSource.getMetadata(collection.entity);
      const spec = listSpecOf(collection.listQuery)!;
      const fields = listFieldsFor(metadata, collection.listQuery);
      expect(Object.keys(fields.columns).sort()).toEqual(
        [
          ...new Set([...Object.keys(spec.filters), ...Object.keys(spec.ranges), ...spec.sort]),
        ].sort(),
      );
      for (const [field, property] of Object.entries(fields.columns)) {
        expect(metadata.findColumnWithPropertyName(property)?.databaseName).toBe(field);
      }
      expect(
        (fields.search ?? []).map((p) => metadata.findColumnWithPropertyName(p)?.databaseName),
      ).toEqual(spec.search ?? []);
    });

    it('has the search index over the columns the list query searches (collection-indexes)', async () => {
      const table = dataSource.getMetadata(collection.entity).tableName;
      const spec = listSpecOf(collection.listQuery)!;
      const indexed = await dataSource.query<{ name: string }[]>(
        `SELECT name FROM pragma_table_info('${table}_search') ORDER BY cid`,
      );
      expect(indexed.map((c) => c.name)).toEqual(spec.search ?? []);
    });

    it('tallies its list totals as the list query declares (collection-indexes)', async () => {
      const table = dataSource.getMetadata(collection.entity).tableName;
      const spec = listSpecOf(collection.listQuery)!;
      const triggers = await dataSource.query<{ name: string }[]>(
        `SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? AND name LIKE 'list_tallies_%'`,
        [table],
      );
      const expected = spec.tally
        ? ['insert', 'delete', 'update_organization', ...spec.tally.map((f) => `update_${f}`)]
        : [];
      expect(triggers.map((t) => t.name).sort()).toEqual(
        expected.map((event) => `list_tallies_${table}_${event}`).sort(),
      );
    });
  });

  it('refuses a list field the entity has no column for', () => {
    const metadata = dataSource.getMetadata(SERVER_RESOURCES.students.entity);
    expect(() => listFieldsFor(metadata, contract.courses.list.query)).toThrow(
      "Student has no column for list field 'code'",
    );
  });

  it('leaves a filter without a column to the service only when it says it computes it', () => {
    const metadata = dataSource.getMetadata(PersonalAccessToken);
    const query = contract.personalAccessTokens.list.query;
    expect(() => listFieldsFor(metadata, query)).toThrow(
      "PersonalAccessToken has no column for list field 'status'",
    );
    expect(Object.keys(listFieldsFor(metadata, query, {}, ['status']).columns)).not.toContain(
      'status',
    );
    expect(() => listFieldsFor(metadata, query, {}, ['state'])).toThrow(
      "PersonalAccessToken: computed filter 'state' is not a filter of the list",
    );
  });
});

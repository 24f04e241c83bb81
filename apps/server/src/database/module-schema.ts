import type { DialectName } from './dialect';
import { type Migration, migrationName, migrationTimestamp } from './migration';

/** An entity class (each has a constructor without arguments, as TypeORM needs). */
export type EntityClass = new () => object;

/** What one module brings to the database: the entities it maps and the migrations it owns. */
export interface ModuleSchema {
  readonly entities: readonly EntityClass[];
  readonly migrations: readonly Migration[];
}

/**
 * The modules' schemas as one: every entity, and every migration in timestamp order. Two
 * migrations with one timestamp would run in an order TypeORM does not define, so that throws.
 */
export function composeSchema(
  dialect: DialectName,
  schemas: readonly ModuleSchema[],
): { entities: EntityClass[]; migrations: Migration[] } {
  const migrations = schemas
    .flatMap((schema) => schema.migrations)
    .sort((a, b) => migrationTimestamp(a, dialect) - migrationTimestamp(b, dialect));
  for (let i = 1; i < migrations.length; i += 1) {
    if (
      migrationTimestamp(migrations[i]!, dialect) ===
      migrationTimestamp(migrations[i - 1]!, dialect)
    ) {
      throw new Error(
        `Migrations ${migrationName(migrations[i - 1]!, dialect)} and ${migrationName(migrations[i]!, dialect)} share a timestamp`,
      );
    }
  }
  return { entities: [...new Set(schemas.flatMap((schema) => schema.entities))], migrations };
}

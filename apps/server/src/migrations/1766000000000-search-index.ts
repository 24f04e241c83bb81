import { dropSearchIndexStatements, searchIndexStatements } from '../database/collection-indexes';
import { statementsMigration } from '../database/migration';

/**
 * Trigram indexes behind `q`, so a search reads the rows that contain the substring instead of
 * every row of the organization (database/collection-indexes.ts describes them). The searchable
 * columns are those the contract declared when this was released, frozen here: a later change to
 * them, or a new collection, needs a migration of its own (`collectionIndexesMigration`).
 */
export const SEARCHABLE: Record<string, readonly string[]> = {
  students: ['first_name', 'last_name', 'email', 'student_number'],
  courses: ['code', 'title'],
  exams: ['title'],
  payments: ['description', 'external_reference'],
};

const tables = Object.entries(SEARCHABLE);

export const searchIndexMigration = statementsMigration(
  'SearchIndex1766000000000',
  (_types, dialect) => [
    ...(dialect === 'postgres' ? ['CREATE EXTENSION IF NOT EXISTS pg_trgm'] : []),
    ...tables.flatMap(([t, columns]) => searchIndexStatements(dialect, t, columns)),
  ],
  // On PostgreSQL the extension stays: other objects may use it, and dropping it needs more
  // privilege.
  (_types, dialect) =>
    tables.flatMap(([t, columns]) => dropSearchIndexStatements(dialect, t, columns)),
);

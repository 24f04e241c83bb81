import { contract } from '@platform/contract';
import { DataSource } from 'typeorm';
import { pageStatements } from '../common/list/find-page';
import { listFieldsFor } from '../common/list/list-fields';
import { loadConfig } from '../config/env';
import { dataSourceOptions } from '../database/data-source';
import type { CompiledSql } from '../database/sql';
import { APP_SCHEMA } from '../schema';
import { Student } from '../students/student.entity';

/**
 * The statements the server sends for `GET /v1/students?<query>` in one organization, compiled for
 * the database at `databaseUrl` (a `DATABASE_URL`) by the server's own list code: the count, the
 * page, and (a tallied total) the page that carries the total, which the server sends instead of
 * the other two. For bench/students-list.bench.js, whose bare baseline must send exactly these.
 * Opens its own connection to read the schema's metadata, and closes it.
 */
export async function studentListStatements(
  databaseUrl: string,
  organizationId: string,
  query: Record<string, string>,
): Promise<{ count: CompiledSql; page: CompiledSql; pageWithTotal?: CompiledSql }> {
  const dataSource = new DataSource(
    dataSourceOptions(loadConfig({ DATABASE_URL: databaseUrl }).database, APP_SCHEMA),
  );
  await dataSource.initialize();
  try {
    const list = contract.students.list.query;
    return pageStatements(
      dataSource.getRepository(Student),
      organizationId,
      list.parse(query),
      listFieldsFor(dataSource.getMetadata(Student), list),
    );
  } finally {
    await dataSource.destroy();
  }
}

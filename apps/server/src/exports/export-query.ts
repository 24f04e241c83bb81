import {
  EXPORT_REFUSED_FILTERS,
  type ExportCollection,
  type ListQuery,
  type ProblemFieldError,
} from '@platform/contract';
import { ProblemException } from '../common/problem.exception';
import { COLLECTION_SOURCES } from './collections';

/**
 * The statement of the rows an export reads: the collection's list query with the export's
 * filters, oldest first, unpaged. A bad filter is a 400 naming it under `body.filters`.
 */
export function exportRowsQuery(
  collection: ExportCollection,
  filters: Record<string, string>,
): ListQuery {
  const errors: ProblemFieldError[] = [];
  for (const name of EXPORT_REFUSED_FILTERS) {
    if (name in filters) {
      errors.push({
        path: `body.filters.${name}`,
        message: `${name} does not apply to an export, which always reads every matching record`,
        code: 'unrecognized_keys',
      });
    }
  }
  const parsed = COLLECTION_SOURCES[collection].listQuery.safeParse(filters);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path.length ? issue.path.join('.') : undefined;
      const named =
        issue.code === 'unrecognized_keys' ? issue.keys.map((k) => `body.filters.${k}`) : [];
      const paths = named.length ? named : [`body.filters${key ? `.${key}` : ''}`];
      for (const path of paths) errors.push({ path, message: issue.message, code: issue.code });
    }
  }
  if (errors.length || !parsed.success) {
    throw new ProblemException(
      'validation_error',
      errors.map((e) => `${e.path}: ${e.message}`).join('; '),
      { errors },
    );
  }
  const query: ListQuery = {
    ...(parsed.data as ListQuery),
    sort: [{ field: 'created_at', direction: 'asc' }],
    page: 1,
    per_page: Number.MAX_SAFE_INTEGER,
  };
  return query;
}

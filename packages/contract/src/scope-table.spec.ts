import { readFileSync } from 'node:fs';
import path from 'node:path';
import { contract } from './contract';
import { costTable, scopeTable, withScopeTable } from './scope-table';

const GUIDE = path.join(__dirname, '..', '..', '..', 'docs', 'api-guide.md');

describe('the scope and cost tables of docs/api-guide.md', () => {
  it('match the contract (regenerate: pnpm --filter @platform/contract build && pnpm --filter @platform/contract scope-table)', () => {
    const guide = readFileSync(GUIDE, 'utf8');
    expect(withScopeTable(guide)).toBe(guide);
  });

  it('has one row per operation, naming its route and scope', () => {
    const table = scopeTable();
    expect(table).toContain('| `students.list` | `GET /v1/students` | `students:read` |');
    expect(table).toContain('| `token.retrieve` | `GET /v1/token` | any valid token |');
    const operations = Object.values(contract).flatMap((router) => Object.keys(router));
    expect(table.split('\n').filter((line) => line.startsWith('| `'))).toHaveLength(
      operations.length,
    );
  });

  it('lists the rate-limit cost of each operation that costs more than one unit', () => {
    const rows = costTable()
      .split('\n')
      .filter((line) => line.startsWith('| '))
      .slice(2);
    expect(rows).toEqual([
      '| `students.batchUpsert` | `POST /v1/students/batch` | 20 |',
      '| `courses.batchUpsert` | `POST /v1/courses/batch` | 20 |',
      '| `enrollments.batchUpsert` | `POST /v1/enrollments/batch` | 20 |',
      '| `payments.batchUpsert` | `POST /v1/payments/batch` | 20 |',
      '| `exams.batchUpsert` | `POST /v1/exams/batch` | 20 |',
      '| `examResults.batchUpsert` | `POST /v1/exam_results/batch` | 20 |',
      '| `exports.create` | `POST /v1/exports` | 20 |',
      '| `exports.createBatch` | `POST /v1/exports/batch` | 120 |',
      '| `exports.download` | `GET /v1/exports/:id/file` | 10 |',
      '| `exports.createDownloadLink` | `POST /v1/exports/:id/download_links` | 10 |',
      '| `checksums.retrieve` | `GET /v1/collections/checksums` | 20 |',
      '| `imports.create` | `POST /v1/imports` | 20 |',
      '| `sandboxes.create` | `POST /v1/sandboxes` | 20 |',
      '| `sandboxes.reset` | `POST /v1/sandboxes/:id/reset` | 20 |',
      '| every other operation | | 1 |',
    ]);
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { contract } from './contract';
import { scopeTable, withScopeTable } from './scope-table';

const GUIDE = path.join(__dirname, '..', '..', '..', 'docs', 'api-guide.md');

describe('the scope table of docs/api-guide.md', () => {
  it('matches the contract (regenerate: pnpm --filter @platform/contract build && pnpm --filter @platform/contract scope-table)', () => {
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
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { generateOpenApiDocument } from './openapi';

describe('openapi.json', () => {
  it('matches the contract (regenerate with: pnpm --filter @platform/contract build && pnpm --filter @platform/contract openapi)', () => {
    const { version } = JSON.parse(
      readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'),
    ) as { version: string };
    const committed: unknown = JSON.parse(
      readFileSync(path.join(__dirname, '..', 'openapi.json'), 'utf8'),
    );
    expect(JSON.parse(JSON.stringify(generateOpenApiDocument(version)))).toEqual(committed);
  });

  it('declares the scope and every error response of each operation', () => {
    const doc = generateOpenApiDocument('test') as {
      paths: Record<
        string,
        Record<string, { security?: unknown; responses: Record<string, unknown> }>
      >;
    };
    const operation = doc.paths['/v1/students']!.get!;
    expect(operation.security).toEqual([{ bearer: ['students:read'] }]);
    expect(Object.keys(operation.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '406',
      '429',
      '500',
      '503', // a q search past its time budget
    ]);
  });
});

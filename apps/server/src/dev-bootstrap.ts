import path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { REPO_ROOT } from './config/env';
import { SeedService } from './seed/seed.service';

/** `pnpm dev`: make sure there is something to look at and print how to look at it. */
export async function runDevBootstrap(app: INestApplication, url: string): Promise<void> {
  const result = await app.get(SeedService).devBootstrap(path.join(REPO_ROOT, 'data', 'dev-token'));
  const lines = [
    '',
    `  Platform API ready at ${url}`,
    `  API reference:  ${url}/docs`,
    `  OpenAPI:        ${url}/openapi.json`,
  ];
  if ('skipped' in result) {
    lines.push(
      `  (${result.skipped}; create a token with: pnpm platform tokens:create --org <id> --name me --scopes all)`,
    );
  } else {
    lines.push(
      `  Demo org:       ${result.organization_id}${result.organization_created ? ` (seeded ${result.created.students} students, ${result.created.courses} courses, ${result.created.enrollments} enrollments, ${result.created.payments} payments)` : ''}`,
      `  Demo token:     ${result.token}   (kept in data/dev-token across restarts)`,
      '',
      '  Try it:',
      `  curl -H "Authorization: Bearer ${result.token}" "${url}/v1/students?per_page=5&sort=last_name"`,
    );
  }
  console.log(`${lines.join('\n')}\n`);
}

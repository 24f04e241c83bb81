import path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { type AppConfig, REPO_ROOT } from './config/env';
import { SeedService } from './seed/seed.service';
import { WebhookEndpointsService } from './webhooks/webhook-endpoints.service';

/** `pnpm dev`: make sure there is something to look at and print how to look at it. */
export async function runDevBootstrap(
  app: INestApplication,
  url: string,
  config: AppConfig,
): Promise<void> {
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
    // The inspector (apps/webhook-inspector) reads the secret from this file to verify deliveries.
    const inspector = config.devWebhookInspectorUrl;
    try {
      const endpoint = await app
        .get(WebhookEndpointsService)
        .ensureDevEndpoint(
          result.organization_id,
          inspector,
          path.join(REPO_ROOT, 'data', 'webhook-inspector.secret'),
        );
      lines.push(
        `  Webhooks:       every event goes to ${inspector} (endpoint ${endpoint.id}); watch them arrive at ${new URL('/', inspector).href}`,
      );
    } catch (error) {
      lines.push(
        `  Webhooks:       the inspector at ${inspector} is not registered: ${(error as Error).message}`,
      );
    }
    lines.push(
      `  Demo org:       ${result.organization_id}${result.organization_created ? ` (seeded ${result.created.students} students, ${result.created.courses} courses, ${result.created.enrollments} enrollments, ${result.created.payments} payments)` : ''}`,
      `  Demo token:     ${result.token}   (kept in data/dev-token across restarts)`,
      '',
      '  Try it:',
      `  curl -H "Authorization: Bearer ${result.token}" "${url}/v1/students?per_page=5&sort=last_name"`,
      '',
      '  See a webhook: create a course, then open the inspector page',
      `  curl -H "Authorization: Bearer ${result.token}" -H "Content-Type: application/json" -d '{"code":"DEV-1","title":"Webhooks 101"}' ${url}/v1/courses`,
    );
  }
  console.log(`${lines.join('\n')}\n`);
}

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { type AppConfig, REPO_ROOT } from './config/env';
import { ProblemException } from './common/problem.exception';
import { UsersService } from './oauth/users.service';
import { PORTAL_PATH } from './oauth/portal-client';
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
    const admin = await ensureDemoAdmin(
      app.get(UsersService),
      result.organization_id,
      path.join(REPO_ROOT, 'data', 'dev-admin-password'),
    );
    lines.push(
      `  Portal:         ${url}${PORTAL_PATH}/  (hot reload; sign in as ${admin})`,
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

export const DEMO_ADMIN_EMAIL = 'admin@demo.school.test';

/**
 * `pnpm dev` only: a demo organization member to sign in to the portal with. The generated
 * password is kept in a file beside the dev token (mode 600) and printed at every start.
 */
async function ensureDemoAdmin(
  users: UsersService,
  organizationId: string,
  passwordFile: string,
): Promise<string> {
  const saved = existsSync(passwordFile) ? readFileSync(passwordFile, 'utf8').trim() : '';
  if (saved && (await users.verifyPassword(DEMO_ADMIN_EMAIL, saved)))
    return `${DEMO_ADMIN_EMAIL} / ${saved}`;
  try {
    const { generatedPassword } = await users.create({ organizationId, email: DEMO_ADMIN_EMAIL });
    mkdirSync(path.dirname(passwordFile), { recursive: true });
    writeFileSync(passwordFile, `${generatedPassword}\n`, { mode: 0o600 });
    return `${DEMO_ADMIN_EMAIL} / ${generatedPassword}   (kept in data/dev-admin-password)`;
  } catch (error) {
    if (error instanceof ProblemException)
      return `${DEMO_ADMIN_EMAIL} (exists; its password is not in data/dev-admin-password: make another user with pnpm platform users:create)`;
    throw error;
  }
}

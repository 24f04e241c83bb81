import { type Command, Option } from 'commander';
import { OPERATOR } from '../../audit/audit-actor';
import { ProblemException } from '../../common/problem.exception';
import { PLANS, type Plan } from '../../organizations/organization.entity';
import { OrganizationsService } from '../../organizations/organizations.service';
import { positiveInteger, type WithContext } from './command';
import { describeOrganization, organizationView } from './organization-view';

/** `platform orgs:update`: change an organization's name, plan or rate limit. */
export function addOrgsUpdate(program: Command, withContext: WithContext): void {
  program
    .command('orgs:update')
    .description(
      "Change an organization's name, plan or rate limit. The new limit applies from the next request, on every instance. Recorded in its audit log.",
    )
    .requiredOption('--id <id>', 'organization id (org_…)')
    .option('--name <name>', 'display name')
    .addOption(new Option('--plan <plan>', 'billing plan').choices(PLANS))
    .option(
      '--rate-limit <n>',
      'requests per rolling minute (above 600 needs the enterprise plan)',
      positiveInteger,
    )
    .option('--json', 'machine-readable output')
    .action(
      (opts: { id: string; name?: string; plan?: Plan; rateLimit?: number; json?: boolean }) =>
        withContext(async (ctx) => {
          if (opts.name === undefined && opts.plan === undefined && opts.rateLimit === undefined) {
            throw new ProblemException(
              'validation_error',
              'nothing to change: give --name, --plan or --rate-limit',
            );
          }
          const organizations = ctx.get(OrganizationsService);
          const org = await organizations.update(
            opts.id,
            {
              ...(opts.name !== undefined && { name: opts.name }),
              ...(opts.plan !== undefined && { plan: opts.plan }),
              ...(opts.rateLimit !== undefined && { rateLimitPerMinute: opts.rateLimit }),
            },
            OPERATOR,
          );
          const view = organizationView(organizations, org);
          return { json: view, text: `Updated ${describeOrganization(view)}` };
        }, !!opts.json),
    );
}

import { type Command, Option } from 'commander';
import { PLANS, type Plan } from '../../organizations/organization.entity';
import { OrganizationsService } from '../../organizations/organizations.service';
import { positiveInteger, type WithContext } from './command';
import { organizationView } from './organization-view';

/** `platform orgs:create`: create an organization (a customer). */
export function addOrgsCreate(program: Command, withContext: WithContext): void {
  program
    .command('orgs:create')
    .description('Create an organization (a customer).')
    .requiredOption('--name <name>', 'display name')
    .addOption(new Option('--plan <plan>', 'billing plan').choices(PLANS).default('standard'))
    .option(
      '--rate-limit <n>',
      'requests per rolling minute (above 600 needs --plan enterprise)',
      positiveInteger,
    )
    .option('--json', 'machine-readable output')
    .action((opts: { name: string; plan: Plan; rateLimit?: number; json?: boolean }) =>
      withContext(async (ctx) => {
        const organizations = ctx.get(OrganizationsService);
        const org = await organizations.create({
          name: opts.name,
          plan: opts.plan,
          ...(opts.rateLimit !== undefined && { rateLimitPerMinute: opts.rateLimit }),
        });
        const view = organizationView(organizations, org);
        return {
          json: view,
          text: `Created organization ${org.id} (${org.name}, ${org.plan}, ${view.rate_limit_per_minute} requests/min)`,
        };
      }, !!opts.json),
    );
}

import type { Command } from 'commander';
import { OrganizationsService } from '../../organizations/organizations.service';
import type { WithContext } from './command';
import { describeOrganization, organizationView } from './organization-view';

/** `platform orgs:list`: every organization with its plan and rate limit. */
export function addOrgsList(program: Command, withContext: WithContext): void {
  program
    .command('orgs:list')
    .description('List organizations with their plan and rate limit.')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) =>
      withContext(async (ctx) => {
        const organizations = ctx.get(OrganizationsService);
        const views = (await organizations.list()).map((org) =>
          organizationView(organizations, org),
        );
        return {
          json: { data: views },
          text: views.length ? views.map(describeOrganization).join('\n') : 'No organizations',
        };
      }, !!opts.json),
    );
}

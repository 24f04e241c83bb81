import type { Command } from 'commander';
import { ProblemException } from '../../common/problem.exception';
import { OrganizationsService } from '../../organizations/organizations.service';
import type { WithContext } from './command';
import { describeOrganization, organizationView } from './organization-view';

/** `platform orgs:show`: one organization. */
export function addOrgsShow(program: Command, withContext: WithContext): void {
  program
    .command('orgs:show')
    .description('Show one organization.')
    .requiredOption('--id <id>', 'organization id (org_…)')
    .option('--json', 'machine-readable output')
    .action((opts: { id: string; json?: boolean }) =>
      withContext(async (ctx) => {
        const organizations = ctx.get(OrganizationsService);
        const org = await organizations.findById(opts.id);
        if (!org) throw new ProblemException('not_found', `No organization ${opts.id}`);
        const view = organizationView(organizations, org);
        return { json: view, text: describeOrganization(view) };
      }, !!opts.json),
    );
}

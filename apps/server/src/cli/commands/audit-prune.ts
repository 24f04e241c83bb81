import type { Command } from 'commander';
import { AuditService } from '../../audit/audit.service';
import type { WithContext } from './command';

/** `platform audit:prune`: delete audit entries past retention. */
export function addAuditPrune(program: Command, withContext: WithContext): void {
  program
    .command('audit:prune')
    .description(
      'Delete audit entries older than AUDIT_RETENTION_DAYS (the server also does this hourly).',
    )
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) =>
      withContext(async (ctx) => {
        const deleted = await ctx.get(AuditService).prune();
        return { json: { deleted }, text: `Deleted ${deleted} audit events past retention` };
      }, !!opts.json),
    );
}

import type { Command } from 'commander';
import { OPERATOR } from '../../audit/audit-actor';
import { TokensService } from '../../auth/tokens.service';
import type { WithContext } from './command';
import { tokenView } from './token-view';

/** `platform tokens:revoke`: revoke a token. */
export function addTokensRevoke(program: Command, withContext: WithContext): void {
  program
    .command('tokens:revoke')
    .description('Revoke a token; the next request that uses it is refused.')
    .requiredOption('--id <id>', 'token id (tok_…)')
    .option('--json', 'machine-readable output')
    .action((opts: { id: string; json?: boolean }) =>
      withContext(async (ctx) => {
        const record = await ctx.get(TokensService).revoke(opts.id, OPERATOR);
        return { json: tokenView(record), text: `Revoked ${record.id} (${record.name})` };
      }, !!opts.json),
    );
}

import type { Command } from 'commander';
import { OPERATOR } from '../../audit/audit-actor';
import { TokensService } from '../../auth/tokens.service';
import { Clock } from '../../common/clock';
import { positiveInteger, type WithContext } from './command';
import { tokenView } from './token-view';

/** `platform tokens:create`: a personal access token, printed once. */
export function addTokensCreate(program: Command, withContext: WithContext): void {
  program
    .command('tokens:create')
    .description('Create a personal access token. It is printed once and cannot be shown again.')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--name <name>', 'what the token is for')
    .requiredOption('--scopes <scopes>', 'comma-separated scopes, or all')
    .option('--expires-in <days>', 'expire after this many days', positiveInteger)
    .option('--json', 'machine-readable output')
    .action(
      (opts: { org: string; name: string; scopes: string; expiresIn?: number; json?: boolean }) =>
        withContext(async (ctx) => {
          const { token, record } = await ctx.get(TokensService).create(
            {
              organizationId: opts.org,
              name: opts.name,
              scopes: opts.scopes.split(','),
              expiresAt: opts.expiresIn
                ? new Date(ctx.get(Clock).nowMs() + opts.expiresIn * 86_400_000)
                : null,
            },
            OPERATOR,
          );
          return {
            json: { ...tokenView(record), token },
            text: `Created token ${record.id} (${record.name}) with scopes ${record.scopes.split(' ').join(', ')}\n\n  ${token}\n\nStore it now: it is not shown again.`,
          };
        }, !!opts.json),
    );
}

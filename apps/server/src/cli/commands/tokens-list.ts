import type { Command } from 'commander';
import { TokensService } from '../../auth/tokens.service';
import { Clock } from '../../common/clock';
import type { WithContext } from './command';
import { tokenView } from './token-view';

/** `platform tokens:list`: an organization's tokens, never their secrets. */
export function addTokensList(program: Command, withContext: WithContext): void {
  program
    .command('tokens:list')
    .description("List an organization's tokens (never their secrets).")
    .requiredOption('--org <id>', 'organization id')
    .option('--json', 'machine-readable output')
    .action((opts: { org: string; json?: boolean }) =>
      withContext(async (ctx) => {
        const tokens = (await ctx.get(TokensService).list(opts.org)).map(tokenView);
        const now = ctx.get(Clock).now().toISOString();
        const text = tokens.length
          ? tokens
              .map(
                (t) =>
                  `${t.id}  ${t.prefix}…  ${t.name}  ${t.revoked_at ? 'revoked' : t.expires_at && t.expires_at < now ? 'expired' : 'active'}  last used ${t.last_used_at ?? 'never'}`,
              )
              .join('\n')
          : 'No tokens';
        return { json: { data: tokens }, text };
      }, !!opts.json),
    );
}

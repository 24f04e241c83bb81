import { getDataSourceToken } from '@nestjs/typeorm';
import type { Command } from 'commander';
import type { DataSource } from 'typeorm';
import type { WithContext } from './command';

/** `platform migrate`: run pending database migrations. */
export function addMigrate(program: Command, withContext: WithContext): void {
  program
    .command('migrate')
    .description('Run pending database migrations (needed before starting on PostgreSQL).')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) =>
      withContext(async (ctx) => {
        const ran = await ctx
          .get<DataSource>(getDataSourceToken())
          .runMigrations({ transaction: 'each' });
        const names = ran.map((m) => m.name);
        return {
          json: { migrations_run: names },
          text: names.length ? `Ran ${names.join(', ')}` : 'Nothing to migrate',
        };
      }, !!opts.json),
    );
}

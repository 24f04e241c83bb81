import type { Command } from 'commander';
import { SeedService } from '../../seed/seed.service';
import { positiveInteger, type WithContext } from './command';

function describeCounts(counts: object): string {
  return Object.entries(counts as Record<string, number>)
    .map(([name, n]) => `${n} ${name.replace('_', ' ')}`)
    .join(', ');
}

/** `platform seed`: the demo organization and a token for it. */
export function addSeed(program: Command, withContext: WithContext): void {
  program
    .command('seed')
    .description(
      'Create the demo organization (students, courses, enrollments, payments, exams, results) and print a token for it.',
    )
    .option('--students <n>', 'number of students', positiveInteger, 200)
    .option(
      '--rate-limit <n>',
      'demo organization rate limit per minute (makes it enterprise; applied to an existing demo organization too)',
      positiveInteger,
    )
    .option('--json', 'machine-readable output')
    .action((opts: { students: number; rateLimit?: number; json?: boolean }) =>
      withContext(async (ctx) => {
        const result = await ctx.get(SeedService).seed({
          students: opts.students,
          ...(opts.rateLimit !== undefined && { rateLimitPerMinute: opts.rateLimit }),
        });
        const text = [
          result.organization_created
            ? `Created demo organization ${result.organization_id}: ${describeCounts(result.created)}`
            : `Demo organization ${result.organization_id} already exists; created a new token`,
          ...(opts.rateLimit !== undefined
            ? [`Rate limit: ${result.rate_limit_per_minute} requests/min (enterprise)`]
            : []),
          `Token: ${result.token}`,
        ].join('\n');
        return { json: result, text };
      }, !!opts.json),
    );
}

import type { INestApplicationContext } from '@nestjs/common';
import { type Role, ROLES } from '@platform/contract';
import { type Command, Option } from 'commander';
import { OPERATOR } from '../../audit/audit-actor';
import { AuditService } from '../../audit/audit.service';
import { ProblemException } from '../../common/problem.exception';
import { toIso } from '../../common/timestamp';
import { TransactionRunner } from '../../common/transactions';
import { UsersService } from '../../oauth/users.service';
import type { CliIo, Output, WithContext } from './command';

interface UsersCreateOptions {
  org: string;
  email: string;
  passwordStdin?: boolean;
  role: Role;
  name?: string;
  json?: boolean;
}

/** `platform users:create`: add a member to an organization. */
export function addUsersCreate(program: Command, withContext: WithContext, io: CliIo): void {
  program
    .command('users:create')
    .description(
      'Add a member to an organization; members sign in on the OAuth consent page. Without --password-stdin a password is generated and printed once.',
    )
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--email <email>', 'sign-in email (one account per email)')
    .option('--password-stdin', 'read the password from stdin instead of generating one')
    .addOption(
      new Option(
        '--role <role>',
        'what the member may do (see docs/api-guide.md, "Members and roles")',
      )
        .choices(ROLES)
        .default('admin'),
    )
    .option('--name <name>', "the member's name")
    .option('--json', 'machine-readable output')
    .action((opts: UsersCreateOptions) =>
      withContext(async (ctx) => {
        const password = opts.passwordStdin ? await readPasswordFromStdin(io.stdin) : undefined;
        return createUser(ctx, opts, password);
      }, !!opts.json),
    );
}

/** The password piped on stdin (first line), for `users:create --password-stdin`. */
async function readPasswordFromStdin(stdin: CliIo['stdin']): Promise<string> {
  if (stdin.isTTY) {
    throw new ProblemException(
      'validation_error',
      '--password-stdin wants the password piped in, e.g. `printf %s "$PW" | pnpm platform users:create …`',
    );
  }
  let input = '';
  for await (const chunk of stdin) input += String(chunk);
  return input.replace(/\r?\n$/, '');
}

async function createUser(
  ctx: INestApplicationContext,
  opts: UsersCreateOptions,
  password: string | undefined,
): Promise<Output> {
  // The member and its audit entry in one transaction.
  const { user, generatedPassword } = await ctx.get(TransactionRunner).run(async (manager) => {
    const created = await ctx.get(UsersService).create(
      {
        organizationId: opts.org,
        email: opts.email,
        role: opts.role,
        name: opts.name ?? null,
        ...(password !== undefined && { password }),
      },
      manager,
    );
    await ctx.get(AuditService).record(
      OPERATOR,
      {
        organizationId: created.user.organizationId,
        action: 'member.added',
        targetType: 'user',
        targetId: created.user.id,
        changes: { email: created.user.email, role: created.user.role },
      },
      manager,
    );
    return created;
  });
  const view = {
    id: user.id,
    object: 'user',
    organization_id: user.organizationId,
    email: user.email,
    name: user.name,
    role: user.role,
    created_at: toIso(user.createdAt),
    ...(generatedPassword && { password: generatedPassword }),
  };
  return {
    json: view,
    text: generatedPassword
      ? `Created user ${user.id} (${user.email}, ${user.role})\n\n  password: ${generatedPassword}\n\nStore it now: it is not shown again.`
      : `Created user ${user.id} (${user.email}, ${user.role})`,
  };
}

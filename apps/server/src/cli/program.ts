import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import { OAuthClientCreateSchema, type Role, ROLES } from '@platform/contract';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { format } from 'node:util';
import type { DataSource } from 'typeorm';
import { OPERATOR } from '../audit/audit-actor';
import { AuditService } from '../audit/audit.service';
import { Clock } from '../common/clock';
import { TransactionRunner } from '../common/transactions';
import type { PersonalAccessToken } from '../auth/personal-access-token.entity';
import { TokensService, toTokenResource } from '../auth/tokens.service';
import { ProblemException } from '../common/problem.exception';
import { toIso } from '../common/timestamp';
import { ConfigError, loadConfig } from '../config/env';
import { assertSupportedNode } from '../config/node-version';
import { OAuthClientsService } from '../oauth/oauth-clients.service';
import { UsersService } from '../oauth/users.service';
import { type Organization, PLANS, type Plan } from '../organizations/organization.entity';
import { OrganizationsService } from '../organizations/organizations.service';
import { SeedService } from '../seed/seed.service';
import { CliModule } from './cli.module';

/** What every command prints: a human summary, or with --json the same facts as one JSON document. */
interface Output {
  json: unknown;
  text: string;
}

function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}

/** The API's view of a token, with its organization (the CLI spans organizations). */
function tokenView(record: PersonalAccessToken) {
  return { ...toTokenResource(record), organization_id: record.organizationId };
}

/**
 * Where a run of the CLI reads and writes: the real process's streams and environment for the
 * binary (main.ts), or strings and a given environment for a test in Jest's own process.
 */
export interface CliIo {
  /**
   * The environment the configuration is read from (DATABASE_URL, AUDIT_RETENTION_DAYS, …) by
   * loadConfig; without it, the process's own, which only the config module reads.
   */
  env?: Record<string, string | undefined>;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Read by `users:create --password-stdin`; a TTY is refused. */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** Runs one command against a Nest application context that is closed again, whatever happens. */
async function runInContext(
  io: CliIo,
  run: (ctx: INestApplicationContext) => Promise<Output>,
  json: boolean,
): Promise<number> {
  let ctx: INestApplicationContext | undefined;
  try {
    assertSupportedNode();
    const config = loadConfig(io.env);
    ctx = await NestFactory.createApplicationContext(CliModule.forRoot(config), {
      logger: ['error'],
      // A failed start (an unreachable database) is this command's error below, not Nest's
      // process.exit(1): runCli never ends the process it runs in.
      abortOnError: false,
    });
    const output = await run(ctx);
    io.stdout.write(`${json ? JSON.stringify(output.json, null, 2) : output.text}\n`);
    return 0;
  } catch (error) {
    const message =
      error instanceof ProblemException || error instanceof ConfigError
        ? error.message
        : error instanceof Error
          ? error.message
          : String(error);
    if (json) io.stdout.write(`${JSON.stringify({ error: { message } }, null, 2)}\n`);
    else io.stderr.write(`error: ${message}\n`);
    return 1;
  } finally {
    await ctx?.close();
  }
}

function describeCounts(counts: object): string {
  return Object.entries(counts as Record<string, number>)
    .map(([name, n]) => `${n} ${name.replace('_', ' ')}`)
    .join(', ');
}

/** An organization as the operator commands print it. */
function organizationView(organizations: OrganizationsService, org: Organization) {
  return {
    id: org.id,
    object: 'organization',
    name: org.name,
    plan: org.plan,
    rate_limit_per_minute: organizations.rateLimitOf(org),
    created_at: toIso(org.createdAt),
    updated_at: toIso(org.updatedAt),
  };
}

function describeOrganization(view: ReturnType<typeof organizationView>): string {
  return `${view.id}  ${view.name}  ${view.plan}  ${view.rate_limit_per_minute} requests/min`;
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

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * Runs `platform <argv…>` and resolves to its exit code. Each call builds its own program
 * (commander keeps parsed options on it), never calls process.exit, and touches only `io`: help
 * and usage errors go to io.stdout / io.stderr, as commander would print them to the process's.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(io, async (run, json) => {
    exitCode = await runInContext(io, run, json);
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    // --help (0) and usage errors (1), already printed by commander through configureOutput.
    if (error instanceof CommanderError) return error.exitCode;
    io.stderr.write(`${format(error)}\n`);
    return 1;
  }
  return exitCode;
}

/** Runs a command's work in a fresh application context; the run's exit code follows from it. */
type WithContext = (
  run: (ctx: INestApplicationContext) => Promise<Output>,
  json: boolean,
) => Promise<void>;

/** The `platform` program of one run: every command, writing through `io`. */
function buildProgram(io: CliIo, withContext: WithContext): Command {
  const program = new Command('platform')
    .description(
      'Administer the Platform API: organizations, tokens, users, OAuth clients, demo data, migrations.',
    )
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .exitOverride()
    .showHelpAfterError();

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

  program
    .command('orgs:update')
    .description(
      "Change an organization's name, plan or rate limit. The new limit applies from the next request, on every instance. Recorded in its audit log.",
    )
    .requiredOption('--id <id>', 'organization id (org_…)')
    .option('--name <name>', 'display name')
    .addOption(new Option('--plan <plan>', 'billing plan').choices(PLANS))
    .option(
      '--rate-limit <n>',
      'requests per rolling minute (above 600 needs the enterprise plan)',
      positiveInteger,
    )
    .option('--json', 'machine-readable output')
    .action(
      (opts: { id: string; name?: string; plan?: Plan; rateLimit?: number; json?: boolean }) =>
        withContext(async (ctx) => {
          if (opts.name === undefined && opts.plan === undefined && opts.rateLimit === undefined) {
            throw new ProblemException(
              'validation_error',
              'nothing to change: give --name, --plan or --rate-limit',
            );
          }
          const organizations = ctx.get(OrganizationsService);
          const org = await organizations.update(
            opts.id,
            {
              ...(opts.name !== undefined && { name: opts.name }),
              ...(opts.plan !== undefined && { plan: opts.plan }),
              ...(opts.rateLimit !== undefined && { rateLimitPerMinute: opts.rateLimit }),
            },
            OPERATOR,
          );
          const view = organizationView(organizations, org);
          return { json: view, text: `Updated ${describeOrganization(view)}` };
        }, !!opts.json),
    );

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
    .action(
      (opts: {
        org: string;
        email: string;
        passwordStdin?: boolean;
        role: Role;
        name?: string;
        json?: boolean;
      }) =>
        withContext(async (ctx) => {
          const password = opts.passwordStdin ? await readPasswordFromStdin(io.stdin) : undefined;
          // The member and its audit entry in one transaction.
          const { user, generatedPassword } = await ctx
            .get(TransactionRunner)
            .run(async (manager) => {
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
        }, !!opts.json),
    );

  program
    .command('oauth-clients:create')
    .description(
      "Register an OAuth client for an organization. A confidential client's secret is printed once.",
    )
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--name <name>', 'shown to users on the consent page')
    .addOption(
      new Option('--type <type>', 'confidential (a server) or public (a native app, PKCE only)')
        .choices(['confidential', 'public'])
        .makeOptionMandatory(),
    )
    .option('--redirect-uri <uri>', 'an exact redirect URI (repeat for several)', collect, [])
    .requiredOption('--scopes <scopes>', 'comma-separated scopes the client may ask for, or all')
    .option(
      '--grants <grants>',
      'comma-separated: authorization_code, refresh_token, client_credentials',
      'authorization_code,refresh_token',
    )
    .option('--json', 'machine-readable output')
    .action(
      (opts: {
        org: string;
        name: string;
        type: string;
        redirectUri: string[];
        scopes: string;
        grants: string;
        json?: boolean;
      }) =>
        withContext(async (ctx) => {
          // The API's own schema, so the CLI and `POST /v1/oauth_clients` accept the same input.
          const parsed = OAuthClientCreateSchema.safeParse({
            name: opts.name,
            type: opts.type,
            redirect_uris: opts.redirectUri,
            scopes: opts.scopes.split(',').map((s) => s.trim()),
            grant_types: opts.grants.split(',').map((s) => s.trim()),
          });
          if (!parsed.success) {
            const issue = parsed.error.issues[0]!;
            throw new ProblemException(
              'validation_error',
              `${issue.path.join('.') || 'input'}: ${issue.message}`,
            );
          }
          const client = await ctx.get(OAuthClientsService).create(opts.org, parsed.data, OPERATOR);
          const lines = [
            `Registered ${client.type} client ${client.id} (${client.name})`,
            `  client_id:     ${client.id}`,
            ...(client.client_secret ? [`  client_secret: ${client.client_secret}`] : []),
            `  grants:        ${client.grant_types.join(', ')}`,
            `  scopes:        ${client.scopes.join(', ')}`,
            ...client.redirect_uris.map((uri) => `  redirect_uri:  ${uri}`),
          ];
          if (client.client_secret) lines.push('', 'Store the secret now: it is not shown again.');
          return { json: client, text: lines.join('\n') };
        }, !!opts.json),
    );

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

  return program;
}

import type { INestApplicationContext } from '@nestjs/common';
import { OAuthClientCreateSchema } from '@platform/contract';
import { type Command, Option } from 'commander';
import { OPERATOR } from '../../audit/audit-actor';
import { ProblemException } from '../../common/problem.exception';
import { OAuthClientsService } from '../../oauth/oauth-clients.service';
import { collect, type Output, type WithContext } from './command';

interface OAuthClientsCreateOptions {
  org: string;
  name: string;
  type: string;
  redirectUri: string[];
  scopes: string;
  grants: string;
  json?: boolean;
}

/** `platform oauth-clients:create`: register an OAuth client for an organization. */
export function addOAuthClientsCreate(program: Command, withContext: WithContext): void {
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
    .action((opts: OAuthClientsCreateOptions) =>
      withContext((ctx) => createOAuthClient(ctx, opts), !!opts.json),
    );
}

async function createOAuthClient(
  ctx: INestApplicationContext,
  opts: OAuthClientsCreateOptions,
): Promise<Output> {
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
}

import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Command, CommanderError } from 'commander';
import { format } from 'node:util';
import { ProblemException } from '../common/problem.exception';
import { ConfigError, loadConfig } from '../config/env';
import { assertSupportedNode } from '../config/node-version';
import { CliModule } from './cli.module';
import { addAuditPrune } from './commands/audit-prune';
import type { CliIo, Output, WithContext } from './commands/command';
import { addMigrate } from './commands/migrate';
import { addOAuthClientsCreate } from './commands/oauth-clients-create';
import { addOrgsCreate } from './commands/orgs-create';
import { addOrgsList } from './commands/orgs-list';
import { addOrgsShow } from './commands/orgs-show';
import { addOrgsUpdate } from './commands/orgs-update';
import { addSeed } from './commands/seed';
import { addTokensCreate } from './commands/tokens-create';
import { addTokensList } from './commands/tokens-list';
import { addTokensRevoke } from './commands/tokens-revoke';
import { addUsersCreate } from './commands/users-create';

export type { CliIo } from './commands/command';

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

/** The `platform` program of one run: every command (one per file in ./commands), writing through `io`. */
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
  addMigrate(program, withContext);
  addOrgsCreate(program, withContext);
  addOrgsList(program, withContext);
  addOrgsShow(program, withContext);
  addOrgsUpdate(program, withContext);
  addAuditPrune(program, withContext);
  addTokensCreate(program, withContext);
  addTokensList(program, withContext);
  addTokensRevoke(program, withContext);
  addUsersCreate(program, withContext, io);
  addOAuthClientsCreate(program, withContext);
  addSeed(program, withContext);
  return program;
}

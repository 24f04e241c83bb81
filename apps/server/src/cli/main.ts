import 'reflect-metadata';
import { runCli } from './program';

// `pnpm platform …` (bin/platform.js) and `node dist/cli/main.js …`: the admin CLI on the real
// process's arguments and streams, configured from its environment (no `env`: loadConfig reads the
// process's own). program.ts assembles the commands (one per file in commands/) and runs the
// Node 24 check before each.
void runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
}).then((code) => {
  process.exitCode = code;
});

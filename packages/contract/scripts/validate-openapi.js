// Validates openapi.json with two independent validators, as any tool that reads it would:
// openapi-spec-validator (Python; the OpenAPI Initiative's schemas) and Redocly's linter (its
// recommended rules, see redocly.yaml). Both must report zero errors. Run by `pnpm lint`.
//
// Redocly sends usage telemetry and checks for updates unless told not to: both are off here,
// and the hermetic guard (inherited by every child through NODE_OPTIONS) fails this run if it
// reaches outside loopback anyway.
require('@platform/hermetic').enforceForRun();
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
const env = {
  ...process.env,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  NO_UPDATE_NOTIFIER: '1',
};
const run = (command, args) => {
  const result = spawnSync(command, args, { cwd: root, env, stdio: 'inherit' });
  if (result.error) throw result.error;
  return result.status === 0;
};

const specValidator = run('python3', ['-m', 'openapi_spec_validator', 'openapi.json']);
const redocly = run(require.resolve('@redocly/cli/bin/cli.js'), [
  'lint',
  'openapi.json',
  '--format=summary',
]);
if (!specValidator || !redocly) process.exitCode = 1;

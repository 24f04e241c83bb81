import { dropTestTemplates } from '../../src/testing/test-database';

/** Drops this run's template databases, then lets the hermetic guard fail the run if it must. */
export default async function globalTeardown(): Promise<void> {
  const run = process.env.PLATFORM_TEST_RUN;
  if (run) await dropTestTemplates(run, process.env.TEST_DATABASE_URL);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS, untyped
  const hermetic: () => Promise<void> = require('@platform/hermetic/jest-global-teardown');
  await hermetic();
}

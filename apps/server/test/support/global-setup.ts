import { randomBytes } from 'node:crypto';

/**
 * Once per Jest run: the hermetic guard, and a run id under which test servers share one migrated
 * template database (src/testing/test-database.ts); workers inherit it through the environment.
 */
export default async function globalSetup(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS, untyped
  const hermetic: () => Promise<void> = require('@platform/hermetic/jest-global-setup');
  await hermetic();
  process.env.PLATFORM_TEST_RUN ??= randomBytes(6).toString('hex');
}

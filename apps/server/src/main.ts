import 'reflect-metadata';
import { createApp } from './app.factory';
import { ConfigError, loadConfig } from './config/env';
import { assertSupportedNode } from './config/node-version';
import { runDevBootstrap } from './dev-bootstrap';

async function main(): Promise<void> {
  assertSupportedNode();
  const config = loadConfig();
  const app = await createApp(config);
  // SIGTERM/SIGINT close the app: the webhook dispatcher finishes its in-flight attempts first.
  app.enableShutdownHooks();
  // A hard bound on top: whatever hangs (an unreachable Redis, a stuck socket), the process exits.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      setTimeout(() => {
        console.error(`Shutdown did not finish in time after ${signal}; exiting`);
        process.exit(1);
      }, config.webhooks.shutdownGraceMs + 5000).unref();
    });
  }
  await app.listen(config.port, config.host);
  // The URLs printed are the OAuth issuer's origin (PUBLIC_URL, else the address listened on,
  // never rewritten to `localhost`), so a client that discovers from them finds the same issuer.
  const listening = await app.getUrl();
  const url = config.publicUrl ?? listening;
  if (config.devBootstrap) {
    await runDevBootstrap(app, url, config);
  } else {
    console.log(`Platform API listening on ${listening} (docs: ${url}/docs)`);
  }
}

main().catch((error: unknown) => {
  // A configuration error is the user's to fix: say what, without a stack trace.
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});

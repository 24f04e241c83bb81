import 'reflect-metadata';
import { createApp } from './app.factory';
import { ConfigError, loadConfig } from './config/env';
import { assertSupportedNode } from './config/node-version';
import { runDevBootstrap } from './dev-bootstrap';
import { shutDownOnSignals } from './shutdown';

async function main(): Promise<void> {
  assertSupportedNode();
  const config = loadConfig();
  const app = await createApp(config);
  // SIGTERM/SIGINT: stop listening, finish the requests in flight, then the webhook attempts.
  shutDownOnSignals(app, config);
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

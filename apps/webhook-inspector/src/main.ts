/**
 * `pnpm dev` / `pnpm start`: the inspector on INSPECTOR_HOST:INSPECTOR_PORT, verifying with the
 * secret(s) in INSPECTOR_SECRET_FILE, re-read on every delivery.
 */
import path from 'node:path';
import { ConfigError, loadConfig, readSecretFile, REPO_ROOT } from './config/env';
import { createInspector } from './inspector';
import { createMailCatcher } from './mail-catcher';

function main(): void {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`Webhook inspector: ${error.message}`);
    process.exit(1);
  }
  const { host, port, secretFile, mailPort } = config;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const catcher = mailPort === null ? undefined : createMailCatcher();
  let smtpUrl = `smtp://${shownHost}:${mailPort ?? 0}`;
  const { server } = createInspector({
    secrets: () => readSecretFile(secretFile),
    ...(catcher && { mail: { messages: () => catcher.messages(), smtpUrl: () => smtpUrl } }),
  });
  catcher?.smtp.on('error', (error: NodeJS.ErrnoException) => {
    console.error(
      error.code === 'EADDRINUSE'
        ? `Mail catcher: port ${mailPort} on ${host} is in use; set MAIL_CATCHER_PORT to another one (or off).`
        : `Mail catcher: ${error.message}`,
    );
    process.exit(1);
  });

  server.on('error', (error: NodeJS.ErrnoException) => {
    console.error(
      error.code === 'EADDRINUSE'
        ? `Webhook inspector: port ${port} on ${host} is in use; set INSPECTOR_PORT to another one.`
        : `Webhook inspector: ${error.message}`,
    );
    process.exit(1);
  });
  server.listen(port, host, () => {
    const address = server.address();
    const actualPort = typeof address === 'object' && address ? address.port : port;
    const shownFile = path.relative(REPO_ROOT, secretFile).startsWith('..')
      ? secretFile
      : path.relative(REPO_ROOT, secretFile);
    console.log(
      `Webhook inspector on http://${shownHost}:${actualPort} (receives at POST /webhooks)\n` +
        `  Signing secret(s) read from ${shownFile} on every delivery.`,
    );
    if (catcher) {
      catcher.smtp.listen(mailPort!, host, () => {
        const smtp = catcher.smtp.server.address();
        const smtpPort = typeof smtp === 'object' && smtp ? smtp.port : mailPort;
        smtpUrl = `smtp://${shownHost}:${smtpPort}`;
        console.log(
          `Mail catcher on ${smtpUrl}: what the API mails (invitations) at http://${shownHost}:${actualPort}/mail`,
        );
      });
    }
  });

  const stop = (): void => {
    catcher?.smtp.close();
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main();

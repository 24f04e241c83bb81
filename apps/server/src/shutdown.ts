import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from './config/env';
import { Draining } from './health/draining';
import { within } from './webhooks/work-trigger';

/**
 * A graceful stop, in the order a load balancer needs: stop taking connections at once (readiness
 * 503, the listener closed, idle keep-alive connections closed, `Connection: close` on every
 * response still going out), let the requests in flight finish (HTTP_SHUTDOWN_GRACE), then close
 * the app, which lets webhook attempts in flight finish (WEBHOOK_SHUTDOWN_GRACE) and closes the
 * database. Nothing is acknowledged after the signal but what was already being served.
 */
export async function shutDown(app: NestExpressApplication, config: AppConfig): Promise<void> {
  app.get(Draining).begin();
  const server = app.getHttpServer();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  if ((await within(closed, config.http.shutdownGraceMs)) === 'timeout') {
    console.error('Requests still in flight after HTTP_SHUTDOWN_GRACE; closing their connections');
    server.closeAllConnections();
    await closed;
  }
  await app.close();
}

/**
 * SIGTERM and SIGINT run `shutDown` once, then exit; a hard bound on top, so whatever hangs (an
 * unreachable Redis, a stuck socket) the process still exits.
 */
export function shutDownOnSignals(app: NestExpressApplication, config: AppConfig): void {
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      const bound = config.http.shutdownGraceMs + config.webhooks.shutdownGraceMs + 5000;
      setTimeout(() => {
        console.error(`Shutdown did not finish in time after ${signal}; exiting`);
        process.exit(1);
      }, bound).unref();
      shutDown(app, config).then(
        () => process.exit(0),
        (error: unknown) => {
          console.error('Shutdown failed:', error);
          process.exit(1);
        },
      );
    });
  }
}

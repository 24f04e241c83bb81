import pino, { type DestinationStream, type Logger } from 'pino';
import type { AppConfig } from '../config/env';

/** The process's one pino logger: JSON lines on stdout, secrets redacted wherever they appear. */
export function createLogger(config: AppConfig, destination?: DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      base: { service: 'platform-api' },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          '*.token',
          '*.authorization',
          'token',
          'authorization',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination(1),
  );
}

import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { StatusClass } from '@platform/contract';
import type { NextFunction, Request, Response } from 'express';
import { Clock } from '../common/clock';
import type { PlatformRequest } from '../common/http-context';
import { newId } from '../common/ids';
import { routePatternOf } from '../common/request-log';
import { TransactionRunner } from '../common/transactions';
import { insertRows } from '../database/write-rows';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { RequestLogRecord } from './request-log.entity';

/** How often the buffer is written: entries show up in the API within about this long. */
export const REQUEST_LOG_FLUSH_MS = 1000;
/** A full batch is written at once rather than at the next tick (one multi-row INSERT). */
export const REQUEST_LOG_BATCH_ROWS = 500;
/**
 * The most entries held while the database refuses them (down, full): past it the oldest are
 * dropped (and counted in a warning), so an outage cannot grow the process without bound.
 */
export const REQUEST_LOG_MAX_BUFFERED = 20_000;

/** The longest path kept; a longer one is cut (the route template still names the endpoint). */
export const REQUEST_LOG_PATH_MAX = 500;

/** The path of a request URL without its query string (nothing after `?`, nor a `#`), cut short. */
export function pathOf(url: string): string {
  const end = url.search(/[?#]/);
  return (end === -1 ? url : url.slice(0, end)).slice(0, REQUEST_LOG_PATH_MAX);
}

export function statusClassOf(status: number): StatusClass {
  return `${Math.min(5, Math.max(1, Math.floor(status / 100)))}xx` as StatusClass;
}

/**
 * Records each authenticated API request (organization known) off the request path: the entry is
 * made when the response finishes, kept in memory, and written in one multi-row INSERT every
 * second or every `REQUEST_LOG_BATCH_ROWS` entries, and once more on shutdown (`app.close()`).
 * Only the route template, the path without its query, status, latency, credential id, request id
 * and error code are kept: never a body, query value, header or secret, which may hold student data.
 */
@Injectable()
export class RequestLogWriter implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('RequestLog');
  private buffer: RequestLogRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private dropped = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transactions: TransactionRunner,
    private readonly clock: Clock,
  ) {}

  get enabled(): boolean {
    return this.config.requestLog.enabled;
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    this.timer = setInterval(() => void this.flush(), REQUEST_LOG_FLUSH_MS);
    this.timer.unref();
  }

  /** Before the database closes: what is buffered is written (graceful shutdown). */
  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** The Express middleware that makes the entries; mounted before routing. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const started = process.hrtime.bigint();
      res.once('finish', () => {
        const r = req as PlatformRequest;
        const principal = r.principal;
        // Unauthenticated requests belong to no organization and are not recorded.
        if (!principal) return;
        const now = this.clock.now();
        this.add({
          id: newId('request_log', now.getTime()),
          organizationId: principal.organizationId,
          method: req.method.slice(0, 8),
          route: (routePatternOf(req) ?? 'unmatched').slice(0, 200),
          path: pathOf(req.originalUrl),
          status: res.statusCode,
          statusClass: statusClassOf(res.statusCode),
          latencyMs: Math.round(Number(process.hrtime.bigint() - started) / 1e3) / 1e3,
          credentialType: principal.kind,
          credentialId:
            principal.kind === 'personal_access_token' ? principal.tokenId : principal.clientId,
          requestId: String(r.id).slice(0, 128),
          errorCode: r.problemCode ?? null,
          createdAt: now,
        });
      });
      next();
    };
  }

  private add(record: RequestLogRecord): void {
    this.buffer.push(record);
    if (this.buffer.length > REQUEST_LOG_MAX_BUFFERED) {
      this.dropped += this.buffer.length - REQUEST_LOG_MAX_BUFFERED;
      this.buffer.splice(0, this.buffer.length - REQUEST_LOG_MAX_BUFFERED);
    }
    if (this.buffer.length >= REQUEST_LOG_BATCH_ROWS) void this.flush();
  }

  /** Writes what is buffered, one batch after another; resolves once it is all written or kept. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writeAll());
    return this.flushing;
  }

  private async writeAll(): Promise<void> {
    if (this.dropped > 0) {
      this.logger.warn(`Dropped ${this.dropped} request log entries the database did not take`);
      this.dropped = 0;
    }
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, REQUEST_LOG_BATCH_ROWS);
      try {
        await this.transactions.run((manager) => insertRows(manager, RequestLogRecord, batch));
      } catch (error) {
        // Kept for the next flush (up to the cap): the log is best effort, the request is done.
        this.buffer.unshift(...batch);
        this.logger.warn(
          `Request log write failed: ${error instanceof Error ? error.message : String(error)}`,
        );
        return;
      }
    }
  }
}

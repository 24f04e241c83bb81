import { Controller, Get, HttpCode, Inject, ServiceUnavailableException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Redis } from 'ioredis';
import type { DataSource } from 'typeorm';
import { TransactionRunner } from '../common/transactions';
import { SERVER_VERSION } from '../common/version';
import { REDIS } from '../redis/redis.module';
import { Draining } from './draining';

/**
 * Liveness (the process answers) and readiness (it can reach its database, and Redis in the
 * scale-out deployment). No auth, no rate limit. Both name the server's release (`version`), as
 * the `Platform-Version` header does on every response.
 */
@Controller('health')
export class HealthController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis | null,
    private readonly transactions: TransactionRunner,
    private readonly draining: Draining,
  ) {}

  @Get('live')
  @HttpCode(200)
  live() {
    return { status: 'ok', version: SERVER_VERSION };
  }

  @Get('ready')
  async ready() {
    if (this.draining.active) throw new ServiceUnavailableException('The server is shutting down');
    try {
      await this.dataSource.query('SELECT 1');
    } catch {
      throw new ServiceUnavailableException('The database is not reachable');
    }
    // Reachable is not enough: a write that cannot commit (no space left, a connection that
    // could not be reset after a failed commit) would only be refused, so take no traffic.
    const writes = this.transactions.writeHealth;
    if (writes.state === 'storage_full') {
      throw new ServiceUnavailableException('The database has no space left for writes');
    }
    if (writes.state === 'broken') {
      throw new ServiceUnavailableException('The database connection could not be reset');
    }
    if (!this.redis) return { status: 'ok', version: SERVER_VERSION, checks: { database: 'ok' } };
    try {
      await this.redis.ping();
    } catch {
      throw new ServiceUnavailableException('Redis is not reachable');
    }
    return { status: 'ok', version: SERVER_VERSION, checks: { database: 'ok', redis: 'ok' } };
  }
}

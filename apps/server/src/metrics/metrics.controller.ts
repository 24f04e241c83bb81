import { timingSafeEqual } from 'node:crypto';
import { Controller, Get, Headers, Inject, Res, UnauthorizedException } from '@nestjs/common';
import type { Response } from 'express';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Metrics } from './metrics';

/**
 * `GET /metrics` in the Prometheus text format. Open unless METRICS_TOKEN is set, in which case
 * it wants `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time).
 */
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async scrape(
    @Headers('authorization') authorization: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const token = this.config.metricsToken;
    if (token && !sameSecret(authorization ?? '', `Bearer ${token}`)) {
      throw new UnauthorizedException('GET /metrics needs Authorization: Bearer <METRICS_TOKEN>');
    }
    res.type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}

export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

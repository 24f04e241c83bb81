import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { WebhookDispatcher } from './dispatcher';
import { QueuedWebhookDispatcher } from './queued-dispatcher';
import { Metrics } from '../metrics/metrics';
import { SecretBox } from './secret-box';
import { WebhookAttemptRecord } from './webhook-attempt.entity';
import { WebhookDeliveriesService } from './webhook-deliveries.service';
import { WebhookEndpointRecord } from './webhook-endpoint.entity';
import { WebhookEndpointsService } from './webhook-endpoints.service';
import { WebhookMessageRecord } from './webhook-message.entity';
import { WebhookDeliveriesController, WebhookEndpointsController } from './webhooks.controller';

/**
 * Endpoints, deliveries and the dispatcher that sends them: one port, two adapters, chosen here
 * once. The embedded `WebhookDispatcher` works from the database alone; with REDIS_URL the
 * `QueuedWebhookDispatcher` shares the work between instances through BullMQ.
 */
const dispatcherProvider = {
  provide: 'WEBHOOK_DISPATCHER',
  inject: [APP_CONFIG, TransactionRunner, SecretBox, Metrics],
  useFactory: (
    config: AppConfig,
    transactions: TransactionRunner,
    secrets: SecretBox,
    metrics: Metrics,
  ) =>
    config.redis
      ? new QueuedWebhookDispatcher(config.webhooks, config.redis, transactions, secrets, metrics)
      : new WebhookDispatcher(config.webhooks, transactions, secrets, metrics),
};

@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookEndpointRecord, WebhookMessageRecord, WebhookAttemptRecord]),
  ],
  controllers: [WebhookEndpointsController, WebhookDeliveriesController],
  providers: [SecretBox, WebhookEndpointsService, WebhookDeliveriesService, dispatcherProvider],
  exports: [WebhookEndpointsService],
})
export class WebhooksModule {}

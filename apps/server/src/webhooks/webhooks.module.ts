import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Clock } from '../common/clock';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { EventsService } from '../events/events.service';
import { Metrics } from '../metrics/metrics';
import { DeliveryStore } from './delivery-store';
import { EmbeddedWebhookDispatcher } from './dispatcher';
import { SecretBox } from './secret-box';
import { WebhookAttemptRecord } from './webhook-attempt.entity';
import { WebhookDeliveriesService } from './webhook-deliveries.service';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookEndpointRecord } from './webhook-endpoint.entity';
import { WebhookEndpointsService } from './webhook-endpoints.service';
import { WebhookMessageRecord } from './webhook-message.entity';
import { WebhookDeliveriesController, WebhookEndpointsController } from './webhooks.controller';

/**
 * Endpoints, deliveries and the dispatcher that sends them: one port (`WebhookDispatcher`), two
 * adapters, chosen here once. The embedded dispatcher works from the database alone; with
 * REDIS_URL the queued one shares the work between instances through BullMQ.
 */
const dispatcherProvider = {
  provide: WebhookDispatcher,
  inject: [APP_CONFIG, TransactionRunner, EventsService, DeliveryStore, SecretBox, Metrics, Clock],
  useFactory: async (
    config: AppConfig,
    transactions: TransactionRunner,
    events: EventsService,
    store: DeliveryStore,
    secrets: SecretBox,
    metrics: Metrics,
    clock: Clock,
  ): Promise<WebhookDispatcher> => {
    const parts = { config: config.webhooks, transactions, events, store, secrets, metrics, clock };
    if (!config.redis) return new EmbeddedWebhookDispatcher(parts);
    // BullMQ (and ioredis) are loaded only when the queued dispatcher is chosen.
    const { QueuedWebhookDispatcher } = await import('./queued-dispatcher');
    return new QueuedWebhookDispatcher(parts, config.redis);
  },
};

@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookEndpointRecord, WebhookMessageRecord, WebhookAttemptRecord]),
  ],
  controllers: [WebhookEndpointsController, WebhookDeliveriesController],
  providers: [
    SecretBox,
    DeliveryStore,
    WebhookEndpointsService,
    WebhookDeliveriesService,
    dispatcherProvider,
  ],
  exports: [WebhookEndpointsService],
})
export class WebhooksModule {}

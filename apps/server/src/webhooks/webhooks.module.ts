import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WebhookDispatcher } from './dispatcher';
import { SecretBox } from './secret-box';
import { WebhookAttemptRecord } from './webhook-attempt.entity';
import { WebhookDeliveriesService } from './webhook-deliveries.service';
import { WebhookEndpointRecord } from './webhook-endpoint.entity';
import { WebhookEndpointsService } from './webhook-endpoints.service';
import { WebhookMessageRecord } from './webhook-message.entity';
import { WebhookDeliveriesController, WebhookEndpointsController } from './webhooks.controller';

/** Endpoints, deliveries and the dispatcher that sends them (see `WebhookDispatcher`). */
@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookEndpointRecord, WebhookMessageRecord, WebhookAttemptRecord]),
  ],
  controllers: [WebhookEndpointsController, WebhookDeliveriesController],
  providers: [SecretBox, WebhookEndpointsService, WebhookDeliveriesService, WebhookDispatcher],
  exports: [WebhookEndpointsService, WebhookDispatcher],
})
export class WebhooksModule {}

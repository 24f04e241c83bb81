import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { TsRestHandler, tsRestHandler } from '@ts-rest/nest';
import type { Principal } from '../auth/principal';
import { type ApiAuditActor, CurrentAuditActor } from '../audit/audit-actor';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { WebhookDeliveriesService } from './webhook-deliveries.service';
import { WebhookEndpointsService } from './webhook-endpoints.service';

@Controller()
export class WebhookEndpointsController {
  constructor(
    private readonly endpoints: WebhookEndpointsService,
    private readonly deliveries: WebhookDeliveriesService,
  ) {}

  @TsRestHandler(contract.webhookEndpoints)
  handle(
    @CurrentPrincipal() principal: Principal,
    @CurrentPageUrl() url: PageUrl,
    @CurrentAuditActor() actor: ApiAuditActor,
  ) {
    return tsRestHandler(contract.webhookEndpoints, {
      list: async ({ query }) => ({
        status: 200,
        body: await this.endpoints.list(principal, query, url),
      }),
      create: async ({ body }) => ({
        status: 201,
        body: await this.endpoints.create(principal, body, actor),
      }),
      retrieve: async ({ params }) => ({
        status: 200,
        body: await this.endpoints.retrieve(principal, params.id),
      }),
      update: async ({ params, body }) => ({
        status: 200,
        body: await this.endpoints.update(principal, params.id, body, actor),
      }),
      delete: async ({ params }) => ({
        status: 200,
        body: await this.endpoints.delete(principal, params.id, actor),
      }),
      rotateSecret: async ({ params }) => ({
        status: 200,
        body: await this.endpoints.rotateSecret(principal, params.id, actor),
      }),
      test: async ({ params }) => ({
        status: 202,
        body: await this.endpoints.test(principal, params.id),
      }),
      deliveries: async ({ params, query }) => ({
        status: 200,
        body: await this.deliveries.list(principal, params.id, query, url),
      }),
    });
  }
}

@Controller()
export class WebhookDeliveriesController {
  constructor(private readonly deliveries: WebhookDeliveriesService) {}

  @TsRestHandler(contract.webhookDeliveries)
  handle(@CurrentPrincipal() principal: Principal) {
    return tsRestHandler(contract.webhookDeliveries, {
      retrieve: async ({ params }) => ({
        status: 200,
        body: await this.deliveries.retrieve(principal, params.id),
      }),
      retry: async ({ params }) => ({
        status: 202,
        body: await this.deliveries.retry(principal, params.id),
      }),
    });
  }
}

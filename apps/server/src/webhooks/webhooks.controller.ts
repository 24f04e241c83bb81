import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import type { Principal } from '../common/principal';
import { type ApiAuditActor, CurrentAuditActor } from '../audit/audit-actor';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { onRecord, resourceHandlers } from '../common/resource-handlers';
import { WebhookDeliveriesService } from './webhook-deliveries.service';
import { WebhookEndpointsService } from './webhook-endpoints.service';

@Controller()
export class WebhookEndpointsController {
  constructor(
    private readonly endpoints: WebhookEndpointsService,
    private readonly deliveries: WebhookDeliveriesService,
  ) {}

  @ApiHandler(contract.webhookEndpoints)
  handle(
    @CurrentPrincipal() principal: Principal,
    @CurrentPageUrl() url: PageUrl,
    @CurrentAuditActor() actor: ApiAuditActor,
  ) {
    return tsRestHandler(contract.webhookEndpoints, {
      ...resourceHandlers(this.endpoints, principal, url, actor),
      rotateSecret: onRecord(200, (id) => this.endpoints.rotateSecret(principal, id, actor)),
      transfer: async ({ params, body }) => ({
        status: 200,
        body: await this.endpoints.transfer(principal, params.id, body.member_id, actor),
      }),
      test: onRecord(202, (id) => this.endpoints.test(principal, id)),
      stats: onRecord(200, (id) => this.deliveries.stats(principal, id)),
      replayFailed: async ({ params, body }) => ({
        status: 202,
        body: await this.deliveries.replayFailed(principal, params.id, body.since),
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

  @ApiHandler(contract.webhookDeliveries)
  handle(@CurrentPrincipal() principal: Principal) {
    return tsRestHandler(contract.webhookDeliveries, {
      retrieve: onRecord(200, (id) => this.deliveries.retrieve(principal, id)),
      retry: onRecord(202, (id) => this.deliveries.retry(principal, id)),
    });
  }
}

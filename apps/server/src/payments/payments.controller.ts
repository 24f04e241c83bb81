import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import type { Principal } from '../common/principal';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { batchHandler, createHandler, onRecord, readHandlers } from '../common/resource-handlers';
import { PaymentsService } from './payments.service';

@Controller()
export class PaymentsController {
  constructor(private readonly payments: PaymentsService) {}

  @ApiHandler(contract.payments)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(contract.payments, {
      ...readHandlers(this.payments, principal, url),
      create: createHandler(this.payments, principal),
      batchUpsert: batchHandler(this.payments, principal),
      succeed: onRecord(200, (id) => this.payments.succeed(principal, id)),
      fail: async ({ params, body }) => ({
        status: 200,
        body: await this.payments.fail(principal, params.id, body),
      }),
      refund: async ({ params, body }) => ({
        status: 200,
        body: await this.payments.refund(principal, params.id, body),
      }),
    });
  }
}

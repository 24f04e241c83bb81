import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { TsRestHandler, tsRestHandler } from '@ts-rest/nest';
import type { Principal } from '../auth/principal';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { PaymentsService } from './payments.service';

@Controller()
export class PaymentsController {
  constructor(private readonly payments: PaymentsService) {}

  @TsRestHandler(contract.payments)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(contract.payments, {
      list: async ({ query }) => ({
        status: 200,
        body: await this.payments.list(principal, query, url),
      }),
      create: async ({ body }) => ({
        status: 201,
        body: await this.payments.create(principal, body),
      }),
      retrieve: async ({ params }) => ({
        status: 200,
        body: await this.payments.retrieve(principal, params.id),
      }),
      succeed: async ({ params }) => ({
        status: 200,
        body: await this.payments.succeed(principal, params.id),
      }),
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

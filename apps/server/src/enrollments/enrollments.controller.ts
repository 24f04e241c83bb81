import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { TsRestHandler, tsRestHandler } from '@ts-rest/nest';
import type { Principal } from '../auth/principal';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { EnrollmentsService } from './enrollments.service';

@Controller()
export class EnrollmentsController {
  constructor(private readonly enrollments: EnrollmentsService) {}

  @TsRestHandler(contract.enrollments)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    const move = (id: string, transition: 'activate' | 'complete' | 'drop' | 'cancel') =>
      this.enrollments.transition(principal, id, transition);
    return tsRestHandler(contract.enrollments, {
      list: async ({ query }) => ({
        status: 200,
        body: await this.enrollments.list(principal, query, url),
      }),
      create: async ({ body }) => ({
        status: 201,
        body: await this.enrollments.create(principal, body),
      }),
      retrieve: async ({ params }) => ({
        status: 200,
        body: await this.enrollments.retrieve(principal, params.id),
      }),
      update: async ({ params, body }) => ({
        status: 200,
        body: await this.enrollments.update(principal, params.id, body),
      }),
      activate: async ({ params }) => ({ status: 200, body: await move(params.id, 'activate') }),
      complete: async ({ params }) => ({ status: 200, body: await move(params.id, 'complete') }),
      drop: async ({ params }) => ({ status: 200, body: await move(params.id, 'drop') }),
      cancel: async ({ params }) => ({ status: 200, body: await move(params.id, 'cancel') }),
    });
  }
}

import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { TsRestHandler, tsRestHandler } from '@ts-rest/nest';
import type { Principal } from '../auth/principal';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { CoursesService } from './courses.service';

@Controller()
export class CoursesController {
  constructor(private readonly courses: CoursesService) {}

  @TsRestHandler(contract.courses)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(contract.courses, {
      list: async ({ query }) => ({
        status: 200,
        body: await this.courses.list(principal, query, url),
      }),
      create: async ({ body }) => ({
        status: 201,
        body: await this.courses.create(principal, body),
      }),
      retrieve: async ({ params }) => ({
        status: 200,
        body: await this.courses.retrieve(principal, params.id),
      }),
      update: async ({ params, body }) => ({
        status: 200,
        body: await this.courses.update(principal, params.id, body),
      }),
      delete: async ({ params }) => ({
        status: 200,
        body: await this.courses.delete(principal, params.id),
      }),
    });
  }
}

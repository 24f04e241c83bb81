import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { TsRestHandler, tsRestHandler } from '@ts-rest/nest';
import type { Principal } from '../auth/principal';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { StudentsService } from './students.service';

@Controller()
export class StudentsController {
  constructor(private readonly students: StudentsService) {}

  @TsRestHandler(contract.students)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(contract.students, {
      list: async ({ query }) => ({
        status: 200,
        body: await this.students.list(principal, query, url),
      }),
      create: async ({ body }) => ({
        status: 201,
        body: await this.students.create(principal, body),
      }),
      retrieve: async ({ params }) => ({
        status: 200,
        body: await this.students.retrieve(principal, params.id),
      }),
      update: async ({ params, body }) => ({
        status: 200,
        body: await this.students.update(principal, params.id, body),
      }),
      delete: async ({ params }) => ({
        status: 200,
        body: await this.students.delete(principal, params.id),
      }),
    });
  }
}

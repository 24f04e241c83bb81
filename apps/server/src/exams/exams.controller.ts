import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { TsRestHandler, tsRestHandler } from '@ts-rest/nest';
import type { Principal } from '../auth/principal';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { ExamResultsService } from './exam-results.service';
import { ExamsService } from './exams.service';

@Controller()
export class ExamsController {
  constructor(private readonly exams: ExamsService) {}

  @TsRestHandler(contract.exams)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(contract.exams, {
      list: async ({ query }) => ({
        status: 200,
        body: await this.exams.list(principal, query, url),
      }),
      create: async ({ body }) => ({ status: 201, body: await this.exams.create(principal, body) }),
      retrieve: async ({ params }) => ({
        status: 200,
        body: await this.exams.retrieve(principal, params.id),
      }),
      update: async ({ params, body }) => ({
        status: 200,
        body: await this.exams.update(principal, params.id, body),
      }),
      delete: async ({ params }) => ({
        status: 200,
        body: await this.exams.delete(principal, params.id),
      }),
    });
  }
}

@Controller()
export class ExamResultsController {
  constructor(private readonly results: ExamResultsService) {}

  @TsRestHandler(contract.examResults)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(contract.examResults, {
      list: async ({ query }) => ({
        status: 200,
        body: await this.results.list(principal, query, url),
      }),
      create: async ({ body }) => ({
        status: 201,
        body: await this.results.create(principal, body),
      }),
      retrieve: async ({ params }) => ({
        status: 200,
        body: await this.results.retrieve(principal, params.id),
      }),
      update: async ({ params, body }) => ({
        status: 200,
        body: await this.results.update(principal, params.id, body),
      }),
      publish: async ({ params }) => ({
        status: 200,
        body: await this.results.publish(principal, params.id),
      }),
    });
  }
}

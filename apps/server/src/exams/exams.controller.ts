import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import type { Principal } from '../common/principal';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import {
  batchHandler,
  createHandler,
  onRecord,
  readHandlers,
  resourceHandlers,
  updateHandler,
} from '../common/resource-handlers';
import { ExamResultsService } from './exam-results.service';
import { ExamsService } from './exams.service';

@Controller()
export class ExamsController {
  constructor(private readonly exams: ExamsService) {}

  @ApiHandler(contract.exams)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(contract.exams, {
      ...resourceHandlers(this.exams, principal, url),
      batchUpsert: batchHandler(this.exams, principal),
    });
  }
}

@Controller()
export class ExamResultsController {
  constructor(private readonly results: ExamResultsService) {}

  @ApiHandler(contract.examResults)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(contract.examResults, {
      ...readHandlers(this.results, principal, url),
      create: createHandler(this.results, principal),
      batchUpsert: batchHandler(this.results, principal),
      update: updateHandler(this.results, principal),
      publish: onRecord(200, (id) => this.results.publish(principal, id)),
    });
  }
}

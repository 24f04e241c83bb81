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
  updateHandler,
} from '../common/resource-handlers';
import { EnrollmentsService } from './enrollments.service';

@Controller()
export class EnrollmentsController {
  constructor(private readonly enrollments: EnrollmentsService) {}

  @ApiHandler(contract.enrollments)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    const move = (transition: 'activate' | 'complete' | 'drop' | 'cancel') =>
      onRecord(200, (id) => this.enrollments.transition(principal, id, transition));
    return tsRestHandler(contract.enrollments, {
      ...readHandlers(this.enrollments, principal, url),
      create: createHandler(this.enrollments, principal),
      batchUpsert: batchHandler(this.enrollments, principal),
      update: updateHandler(this.enrollments, principal),
      activate: move('activate'),
      complete: move('complete'),
      drop: move('drop'),
      cancel: move('cancel'),
    });
  }
}

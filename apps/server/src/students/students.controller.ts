import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import type { Principal } from '../common/principal';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { batchHandler, resourceHandlers } from '../common/resource-handlers';
import { StudentsService } from './students.service';

@Controller()
export class StudentsController {
  constructor(private readonly students: StudentsService) {}

  @ApiHandler(contract.students)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(contract.students, {
      ...resourceHandlers(this.students, principal, url),
      batchUpsert: batchHandler(this.students, principal),
    });
  }
}

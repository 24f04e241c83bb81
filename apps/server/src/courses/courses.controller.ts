import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import type { Principal } from '../common/principal';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { batchHandler, resourceHandlers } from '../common/resource-handlers';
import { CoursesService } from './courses.service';

@Controller()
export class CoursesController {
  constructor(private readonly courses: CoursesService) {}

  @ApiHandler(contract.courses)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(contract.courses, {
      ...resourceHandlers(this.courses, principal, url),
      batchUpsert: batchHandler(this.courses, principal),
    });
  }
}

import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import type { Principal } from '../common/principal';
import { CurrentPrincipal } from '../common/request-context';
import { readHandlers } from '../common/resource-handlers';
import { RequestLogsService } from './request-logs.service';

@Controller()
export class RequestLogsController {
  constructor(private readonly logs: RequestLogsService) {}

  @ApiHandler(contract.requestLogs)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(
      contract.requestLogs,
      readHandlers(this.logs, principal.organizationId, url),
    );
  }
}

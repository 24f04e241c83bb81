import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { TsRestHandler, tsRestHandler } from '@ts-rest/nest';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import type { Principal } from '../common/principal';
import { CurrentPrincipal } from '../common/request-context';
import { readHandlers } from '../common/resource-handlers';
import { RequestLogsService } from './request-logs.service';

@Controller()
export class RequestLogsController {
  constructor(private readonly logs: RequestLogsService) {}

  @TsRestHandler(contract.requestLogs)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(
      contract.requestLogs,
      readHandlers(this.logs, principal.organizationId, url),
    );
  }
}

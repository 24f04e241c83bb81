import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import type { Principal } from '../common/principal';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { readHandlers } from '../common/resource-handlers';
import { AuditService } from './audit.service';

@Controller()
export class AuditEventsController {
  constructor(private readonly audit: AuditService) {}

  @ApiHandler(contract.auditEvents)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(
      contract.auditEvents,
      readHandlers(this.audit, principal.organizationId, url),
    );
  }
}

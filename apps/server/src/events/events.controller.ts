import { Controller, Req } from '@nestjs/common';
import { contract } from '@platform/contract';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import type { PlatformRequest } from '../common/http-context';
import type { Principal } from '../common/principal';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { readHandlers } from '../common/resource-handlers';
import { ChangeFeedService } from './change-feed.service';
import { EventsService } from './events.service';

@Controller()
export class EventsController {
  constructor(
    private readonly events: EventsService,
    private readonly feed: ChangeFeedService,
  ) {}

  @ApiHandler(contract.events)
  handle(
    @CurrentPrincipal() principal: Principal,
    @CurrentPageUrl() url: PageUrl,
    @Req() req: PlatformRequest,
  ) {
    return tsRestHandler(contract.events, {
      ...readHandlers(this.events, principal, url),
      changes: async ({ query }) => ({
        status: 200 as const,
        body: await this.feed.read(principal, query, req.recheckAccess),
      }),
    });
  }
}

import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { TsRestHandler, tsRestHandler } from '@ts-rest/nest';
import type { Principal } from '../auth/principal';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { EventsService } from './events.service';

@Controller()
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @TsRestHandler(contract.events)
  handle(@CurrentPrincipal() principal: Principal, @CurrentPageUrl() url: PageUrl) {
    return tsRestHandler(contract.events, {
      list: async ({ query }) => ({
        status: 200,
        body: await this.events.list(principal, query, url),
      }),
      retrieve: async ({ params }) => ({
        status: 200,
        body: await this.events.retrieve(principal, params.id),
      }),
    });
  }
}

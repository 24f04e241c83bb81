import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import type { Principal } from '../common/principal';
import { CurrentPrincipal } from '../common/request-context';
import { UsageService } from './usage.service';

@Controller()
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @ApiHandler(contract.usage)
  handle(@CurrentPrincipal() principal: Principal) {
    return tsRestHandler(contract.usage, {
      retrieve: async ({ query }) => ({
        status: 200 as const,
        body: await this.usage.usage(principal.organizationId, query.source ?? 'api', query.range),
      }),
    });
  }
}

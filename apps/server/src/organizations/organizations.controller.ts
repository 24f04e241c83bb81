import { Controller, Req } from '@nestjs/common';
import { contract, type OrganizationResource } from '@platform/contract';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import type { Request } from 'express';
import { type ApiAuditActor, CurrentAuditActor } from '../audit/audit-actor';
import type { Principal } from '../common/principal';
import { asPlatformRequest } from '../common/http-context';
import { publicId } from '../common/ids';
import { notFound } from '../common/resource-errors';
import { CurrentPrincipal } from '../common/request-context';
import { toIso } from '../common/timestamp';
import type { Organization } from './organization.entity';
import { OrganizationsService } from './organizations.service';

@Controller()
export class OrganizationController {
  constructor(private readonly organizations: OrganizationsService) {}

  @ApiHandler(contract.organization)
  handle(
    @CurrentPrincipal() principal: Principal,
    @CurrentAuditActor() actor: ApiAuditActor,
    @Req() request: Request,
  ) {
    const req = asPlatformRequest(request);
    const view = (organization: Organization): OrganizationResource => {
      const limit = this.organizations.rateLimitOf(organization);
      // The window as this request left it (the guard charged it): the same numbers as the
      // X-RateLimit-* headers, from the shared store (memory, or Redis across instances).
      // Rate-limit windows run on the throttler's own time base (memory or Redis), not the Clock.
      const window = req.rateLimit ?? { limit, remaining: limit, resetAtMs: Date.now() };
      return {
        id: publicId('organization', organization.id),
        object: 'organization',
        name: organization.name,
        plan: organization.plan,
        rate_limit: {
          limit_per_minute: limit,
          used: Math.max(0, window.limit - window.remaining),
          remaining: Math.min(limit, window.remaining),
          resets_at: toIso(new Date(window.resetAtMs)),
        },
        created_at: toIso(organization.createdAt),
        updated_at: toIso(organization.updatedAt),
      };
    };
    return tsRestHandler(contract.organization, {
      retrieve: async () => {
        const organization = await this.organizations.findById(principal.organizationId);
        if (!organization) throw notFound('organization', principal.organizationId);
        return { status: 200, body: view(organization) };
      },
      update: async ({ body }) => ({
        status: 200,
        body: view(await this.organizations.update(principal.organizationId, body, actor)),
      }),
    });
  }
}

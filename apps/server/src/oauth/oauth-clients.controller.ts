import { Controller } from '@nestjs/common';
import { contract } from '@platform/contract';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import { assertExpiryWithin, assertScopesWithin, expandScopes } from '../auth/delegation';
import type { Principal } from '../common/principal';
import { type ApiAuditActor, CurrentAuditActor } from '../audit/audit-actor';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { CurrentPrincipal } from '../common/request-context';
import { deleteHandler, onRecord, readHandlers } from '../common/resource-handlers';
import { toIso } from '../common/timestamp';
import { OAuthClientsService } from './oauth-clients.service';

@Controller()
export class OAuthClientsController {
  constructor(private readonly clients: OAuthClientsService) {}

  @ApiHandler(contract.oauthClients)
  handle(
    @CurrentPrincipal() principal: Principal,
    @CurrentPageUrl() url: PageUrl,
    @CurrentAuditActor() actor: ApiAuditActor,
  ) {
    return tsRestHandler(contract.oauthClients, {
      ...readHandlers(this.clients, principal, url),
      create: async ({ body }) => {
        assertScopesWithin(principal, expandScopes(body.scopes));
        // An explicit expiry past the caller's is refused, as for personal tokens; none given
        // binds the client to the caller's expiry (a 1-hour OAuth token: the client ends with it).
        if (body.expires_at) assertExpiryWithin(principal, new Date(body.expires_at));
        const expiresAt = body.expires_at ?? (principal.expiresAt && toIso(principal.expiresAt));
        return {
          status: 201,
          body: await this.clients.create(
            principal.organizationId,
            {
              ...body,
              expires_at: expiresAt,
            },
            actor,
          ),
        };
      },
      update: async ({ params, body }) => ({
        status: 200,
        body: await this.clients.update(principal, params.id, body, actor),
      }),
      rotateSecret: onRecord(200, (id) => this.clients.rotateSecret(principal, id, actor)),
      transfer: async ({ params, body }) => ({
        status: 200,
        body: await this.clients.transfer(principal, params.id, body.member_id, actor),
      }),
      delete: deleteHandler(this.clients, principal, actor),
    });
  }
}

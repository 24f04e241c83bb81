import { Controller } from '@nestjs/common';
import { contract, type TokenInfo } from '@platform/contract';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { assertMayActAs } from './acting-as';
import { CurrentPrincipal } from '../common/request-context';
import { onRecord } from '../common/resource-handlers';
import { toIso } from '../common/timestamp';
import { assertCovers, assertExpiryWithin, assertScopesWithin, expandScopes } from './delegation';
import type { Principal } from '../common/principal';
import { type ApiAuditActor, CurrentAuditActor } from '../audit/audit-actor';
import { TokensService, toTokenResource } from './tokens.service';
import { publicId } from '../common/ids';

@Controller()
export class PersonalAccessTokensController {
  constructor(private readonly tokens: TokensService) {}

  @ApiHandler(contract.personalAccessTokens)
  handle(
    @CurrentPrincipal() principal: Principal,
    @CurrentPageUrl() url: PageUrl,
    @CurrentAuditActor() actor: ApiAuditActor,
  ) {
    const organizationId = principal.organizationId;
    return tsRestHandler(contract.personalAccessTokens, {
      list: async ({ query }) => ({
        status: 200,
        body: await this.tokens.listPage(organizationId, query, url),
      }),
      create: async ({ body }) => {
        const scopes = expandScopes(body.scopes);
        const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
        assertScopesWithin(principal, scopes);
        assertExpiryWithin(principal, expiresAt);
        const { token, record } = await this.tokens.create(
          {
            organizationId,
            name: body.name,
            scopes,
            expiresAt,
            // A member's token makes tokens for that member: their role caps them too.
            userId: principal.userId,
          },
          actor,
        );
        return { status: 201, body: { ...toTokenResource(record), token } };
      },
      retrieve: onRecord(200, async (id) =>
        toTokenResource(await this.tokens.retrieve(organizationId, id)),
      ),
      delete: async ({ params }) => {
        const target = await this.tokens.retrieve(organizationId, params.id);
        assertCovers(principal, target.scopes.split(' '), 'revoke', 'a token');
        assertMayActAs(principal, target.userId, `Personal access token ${target.id}`);
        return {
          status: 200,
          body: toTokenResource(await this.tokens.revoke(params.id, actor, organizationId)),
        };
      },
    });
  }
}

@Controller()
export class TokenController {
  @ApiHandler(contract.token)
  handle(@CurrentPrincipal() principal: Principal) {
    return tsRestHandler(contract.token, {
      retrieve: () => Promise.resolve({ status: 200 as const, body: describeToken(principal) }),
    });
  }
}

export function describeToken(principal: Principal): TokenInfo {
  return {
    object: 'token',
    type: principal.kind,
    organization_id: publicId('organization', principal.organizationId),
    scopes: [...principal.scopes],
    expires_at: principal.expiresAt && toIso(principal.expiresAt),
    personal_access_token_id: publicId(
      'personal_access_token',
      principal.kind === 'personal_access_token' ? principal.tokenId : null,
    ),
    client_id: publicId(
      'oauth_client',
      principal.kind === 'oauth_access_token' ? principal.clientId : null,
    ),
    user_id: publicId('user', principal.userId),
  };
}

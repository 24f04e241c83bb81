import { Controller } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { contract } from '@platform/contract';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import type { Repository } from 'typeorm';
import { type ApiAuditActor, CurrentAuditActor } from '../audit/audit-actor';
import { assertExpiryWithin, assertScopesWithin, expandScopes } from '../auth/delegation';
import { TokensService, toTokenResource } from '../auth/tokens.service';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import type { Principal } from '../common/principal';
import { ProblemException } from '../common/problem.exception';
import { CurrentPrincipal } from '../common/request-context';
import { listHandler, onRecord } from '../common/resource-handlers';
import { Organization } from '../organizations/organization.entity';
import { SandboxTriggerService } from './sandbox-trigger.service';
import { SandboxesService, toSandboxResource } from './sandboxes.service';

@Controller()
export class SandboxesController {
  constructor(
    private readonly sandboxes: SandboxesService,
    private readonly tokens: TokensService,
  ) {}

  @ApiHandler(contract.sandboxes)
  handle(
    @CurrentPrincipal() principal: Principal,
    @CurrentPageUrl() url: PageUrl,
    @CurrentAuditActor() actor: ApiAuditActor,
  ) {
    return tsRestHandler(contract.sandboxes, {
      create: async ({ body }) => ({
        status: 201,
        body: await this.sandboxes.create(principal, body, actor),
      }),
      list: listHandler(this.sandboxes, principal, url),
      retrieve: onRecord(200, async (id) =>
        toSandboxResource(await this.sandboxes.find(principal, id)),
      ),
      reset: onRecord(200, (id) => this.sandboxes.reset(principal, id, actor)),
      delete: onRecord(200, (id) => this.sandboxes.delete(principal, id, actor)),
      createToken: async ({ params, body }) => {
        const sandbox = await this.sandboxes.find(principal, params.id);
        const scopes = expandScopes(body.scopes);
        const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
        assertScopesWithin(principal, scopes);
        assertExpiryWithin(principal, expiresAt);
        // A member's token reaches the sandbox with `organization:read`; a token of no member
        // makes one that acts for the sandbox itself, which no member's leaving ends, so it
        // needs what making any token needs.
        if (!principal.userId && !principal.scopes.has('tokens:write')) {
          throw new ProblemException(
            'insufficient_scope',
            "A token that acts for no member needs the 'tokens:write' scope to make a sandbox's token",
            {
              headers: {
                'WWW-Authenticate':
                  'Bearer realm="platform", error="insufficient_scope", scope="tokens:write"',
              },
            },
          );
        }
        // The member's token of the sandbox: their role here caps it, and it dies with it.
        const { token, record } = await this.tokens.create(
          {
            organizationId: sandbox.id,
            name: body.name,
            scopes,
            expiresAt,
            userId: principal.userId,
          },
          actor,
        );
        return { status: 201, body: { ...toTokenResource(record), token } };
      },
    });
  }
}

@Controller()
export class SandboxTriggerController {
  constructor(
    private readonly triggers: SandboxTriggerService,
    @InjectRepository(Organization) private readonly organizations: Repository<Organization>,
  ) {}

  @ApiHandler(contract.sandbox)
  handle(@CurrentPrincipal() principal: Principal) {
    return tsRestHandler(contract.sandbox, {
      trigger: async ({ body }) => {
        const organization = await this.organizations.findOneBy({ id: principal.organizationId });
        if (!organization?.parentOrganizationId) {
          throw new ProblemException(
            'forbidden',
            "POST /v1/sandbox/trigger changes a sandbox only: call it with a sandbox's token (pat_test_…)",
          );
        }
        return {
          status: 201,
          body: await this.triggers.trigger(principal, body.event, body.overrides),
        };
      },
    });
  }
}

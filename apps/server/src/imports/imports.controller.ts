import { Readable } from 'node:stream';
import { Controller, Req, StreamableFile } from '@nestjs/common';
import { contract, IMPORT_ERRORS_CONTENT_TYPE } from '@platform/contract';
import type { Request } from 'express';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import { type ApiAuditActor, CurrentAuditActor } from '../audit/audit-actor';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import type { Principal } from '../common/principal';
import { CurrentPrincipal } from '../common/request-context';
import { listHandler, onRecord } from '../common/resource-handlers';
import { IDEMPOTENT_REPLAYED_HEADER, ImportsService } from './imports.service';

@Controller()
export class ImportsController {
  constructor(private readonly imports: ImportsService) {}

  @ApiHandler(contract.imports)
  handle(
    @CurrentPrincipal() principal: Principal,
    @CurrentPageUrl() url: PageUrl,
    @CurrentAuditActor() actor: ApiAuditActor,
    // The request, not @Res: that would take the answer away from ts-rest.
    @Req() req: Request,
  ) {
    return tsRestHandler(contract.imports, {
      create: async ({ query }) => {
        const answer = await this.imports.create(principal, query, req, actor);
        if (answer.replayed) req.res!.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
        return { status: 202, body: answer.body };
      },
      list: listHandler(this.imports, principal, url),
      retrieve: onRecord(200, (id) => this.imports.retrieve(principal, id)),
      errors: async ({ params }) => {
        const report = this.imports.errorReport(principal, params.id);
        // The first line waits for the import's check: a 404 is still a problem+json answer.
        const first = await report.next();
        const lines = (async function* () {
          if (!first.done) yield first.value;
          yield* report;
        })();
        req.res!.setHeader('Cache-Control', 'private, no-store');
        const file = new StreamableFile(Readable.from(lines), {
          type: IMPORT_ERRORS_CONTENT_TYPE,
          disposition: `attachment; filename="${params.id}-errors.csv"`,
        });
        return { status: 200, body: file as unknown as string };
      },
    });
  }
}

import { Readable } from 'node:stream';
import { Controller, StreamableFile } from '@nestjs/common';
import { contract, EXPORT_CONTENT_TYPES } from '@platform/contract';
import { TsRestHandler, tsRestHandler } from '@ts-rest/nest';
import { type ApiAuditActor, CurrentAuditActor } from '../audit/audit-actor';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import type { Principal } from '../common/principal';
import { CurrentPrincipal } from '../common/request-context';
import { listHandler, onRecord } from '../common/resource-handlers';
import { ChecksumsService } from './checksums.service';
import { ExportsService } from './exports.service';

@Controller()
export class ExportsController {
  constructor(private readonly exports: ExportsService) {}

  @TsRestHandler(contract.exports)
  handle(
    @CurrentPrincipal() principal: Principal,
    @CurrentPageUrl() url: PageUrl,
    @CurrentAuditActor() actor: ApiAuditActor,
  ) {
    return tsRestHandler(contract.exports, {
      create: async ({ body }) => ({
        status: 202,
        body: await this.exports.create(principal, body, actor),
      }),
      list: listHandler(this.exports, principal, url),
      retrieve: onRecord(200, (id) => this.exports.retrieve(principal, id)),
      download: async ({ params }) => {
        const file = await this.exports.download(principal, params.id);
        const extension = file.export.format === 'csv' ? 'csv' : 'ndjson';
        // Chunk by chunk, as the client reads: at most a chunk or two in memory per download.
        const body = new StreamableFile(Readable.from(file.chunks, { highWaterMark: 1 }), {
          type: EXPORT_CONTENT_TYPES[file.export.format],
          disposition: `attachment; filename="${file.export.id}.${extension}"`,
          ...(file.export.size_bytes !== null && { length: file.export.size_bytes }),
        });
        return { status: 200, body: body as unknown as string };
      },
    });
  }
}

@Controller()
export class ChecksumsController {
  constructor(private readonly checksums: ChecksumsService) {}

  @TsRestHandler(contract.checksums)
  handle(@CurrentPrincipal() principal: Principal) {
    return tsRestHandler(contract.checksums, {
      retrieve: async ({ query }) => ({
        status: 200,
        body: await this.checksums.retrieve(principal, query),
      }),
    });
  }
}

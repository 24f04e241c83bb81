import { Readable } from 'node:stream';
import { Controller, Get, Param, Req, Res, StreamableFile } from '@nestjs/common';
import {
  contract,
  EXPORT_CONTENT_TYPES,
  EXPORT_DOWNLOAD_PATH,
  type Export,
} from '@platform/contract';
import type { Request, Response } from 'express';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
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

  @ApiHandler(contract.exports)
  handle(
    @CurrentPrincipal() principal: Principal,
    @CurrentPageUrl() url: PageUrl,
    @CurrentAuditActor() actor: ApiAuditActor,
    // The request, not @Res: that would take the answer away from ts-rest.
    @Req() req: Request,
  ) {
    return tsRestHandler(contract.exports, {
      create: async ({ body }) => ({
        status: 202,
        body: await this.exports.create(principal, body, actor),
      }),
      createBatch: async ({ body }) => ({
        status: 202,
        body: await this.exports.createBatch(principal, body, actor),
      }),
      list: listHandler(this.exports, principal, url),
      retrieve: onRecord(200, (id) => this.exports.retrieve(principal, id)),
      download: async ({ params }) => {
        const file = await this.exports.download(principal, params.id);
        noStore(req.res!);
        return { status: 200, body: fileBody(file) as unknown as string };
      },
      createDownloadLink: async ({ params }) => ({
        status: 201,
        body: await this.exports.createDownloadLink(principal, params.id, actor),
      }),
    });
  }
}

/** An export's file holds student data: never kept by a browser or proxy, nor sent on as a Referer. */
function noStore(res: Response): void {
  res.setHeader('Cache-Control', 'private, no-store');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

/** An export's file as the response body, with its type, name and length. */
function fileBody(file: { export: Export; chunks: AsyncIterable<Buffer> }): StreamableFile {
  const extension = file.export.format === 'csv' ? 'csv' : 'ndjson';
  // Chunk by chunk, as the client reads: at most a chunk or two in memory per download.
  return new StreamableFile(Readable.from(file.chunks, { highWaterMark: 1 }), {
    type: EXPORT_CONTENT_TYPES[file.export.format],
    disposition: `attachment; filename="${file.export.id}.${extension}"`,
    ...(file.export.size_bytes !== null && { length: file.export.size_bytes }),
  });
}

/**
 * The download links' own route, outside the contract: no token, the link is the credential.
 * It is an anonymous request to the front door (charged to the client IP's budget), and the
 * request log line names the route template, never the token in the path. Not cached, and never
 * sent on as a Referer.
 */
@Controller()
export class ExportDownloadsController {
  constructor(private readonly exports: ExportsService) {}

  @Get(`${EXPORT_DOWNLOAD_PATH.slice(1)}/:token`)
  async download(
    @Param('token') token: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<StreamableFile> {
    noStore(res);
    return fileBody(await this.exports.redeemDownloadLink(token));
  }
}

@Controller()
export class ChecksumsController {
  constructor(private readonly checksums: ChecksumsService) {}

  @ApiHandler(contract.checksums)
  handle(@CurrentPrincipal() principal: Principal) {
    return tsRestHandler(contract.checksums, {
      retrieve: async ({ query }) => ({
        status: 200,
        body: await this.checksums.retrieve(principal, query),
      }),
    });
  }
}

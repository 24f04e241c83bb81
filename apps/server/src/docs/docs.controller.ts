import { Controller, Get, Header, Req } from '@nestjs/common';
import type { Request } from 'express';
import openapi from '@platform/contract/openapi.json';
import { asPlatformRequest, requestOrigin } from '../common/http-context';
import { renderDeprecationsPage } from './deprecations-page';
import { renderErrorsPage } from './errors-page';

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Platform API reference</title>
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/assets/redoc.standalone.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

/**
 * Redoc (vendored from the `redoc` package, see app.factory.ts): each operation with its
 * x-codeSamples (TypeScript, PHP, Python) beside it, the webhooks, and the error codes from the
 * document's description. The search index is built without a worker, which the CSP forbids.
 */
const DOCS_INIT = `Redoc.init('/openapi.json', {
  expandResponses: '200,201',
  jsonSampleExpandLevel: 2,
  hideDownloadButton: false,
  sortPropsAlphabetically: false,
}, document.getElementById('reference'));
`;

const ERRORS_PAGE = renderErrorsPage();
const DEPRECATIONS_PAGE = renderDeprecationsPage();

/** The committed OpenAPI document (generated from the contract) and a reference page over it. */
@Controller()
export class DocsController {
  @Get('openapi.json')
  @Header('Cache-Control', 'public, max-age=300')
  openapi(@Req() req: Request) {
    // The origin this server names itself by (PUBLIC_URL, else the one the caller reached), as
    // in pagination links and problem types: never the committed document's `pnpm dev` address.
    return {
      ...openapi,
      servers: [{ url: requestOrigin(asPlatformRequest(req)), description: 'This server' }],
    };
  }

  @Get('docs')
  @Header('Content-Type', 'text/html; charset=utf-8')
  page() {
    return DOCS_HTML;
  }

  /** What problem `type` URIs point at: every error code, its status, title and what to do. */
  @Get('docs/errors')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=300')
  errors() {
    return ERRORS_PAGE;
  }

  /** What `Link; rel="deprecation"` points at: each deprecated part, its dates and what to use. */
  @Get('docs/deprecations')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=300')
  deprecations() {
    return DEPRECATIONS_PAGE;
  }

  @Get('docs/init.js')
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  init() {
    return DOCS_INIT;
  }
}

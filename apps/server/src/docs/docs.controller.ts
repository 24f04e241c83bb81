import { Controller, Get, Header, Inject } from '@nestjs/common';
import openapi from '@platform/contract/openapi.json';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { renderDeprecationsPage } from './deprecations-page';
import { renderErrorsPage } from './errors-page';

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Platform API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true });\n`;

const ERRORS_PAGE = renderErrorsPage();
const DEPRECATIONS_PAGE = renderDeprecationsPage();

/** The committed OpenAPI document (generated from the contract) and a reference page over it. */
@Controller()
export class DocsController {
  /** The committed document, naming this server (`PUBLIC_URL`) in `servers` when it is set. */
  private readonly document: object;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.document = config.publicUrl
      ? { ...openapi, servers: [{ url: config.publicUrl, description: 'This server' }] }
      : openapi;
  }

  @Get('openapi.json')
  @Header('Cache-Control', 'public, max-age=300')
  openapi() {
    return this.document;
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

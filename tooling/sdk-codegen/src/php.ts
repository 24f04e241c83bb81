/**
 * The PHP client's generated half: one service class per resource (plus its `->raw` twin), one
 * model class per response/event schema, a constants class per enum, a factory per union, and the
 * list of operations. The hand-written core (packages/client-php/src/{Core,OAuth,Exception,Webhook})
 * does the HTTP, retries, pagination and errors; everything here only describes the API.
 *
 * Conventions the core relies on: models extend `Core\Model` (lenient `fromArray()`, lossless
 * `toArray()`), request parameters are plain arrays documented with array shapes (so `null` and
 * "absent" stay different), and each service method calls `HttpClient::request()`.
 */
import { Context } from './php-source';
import type { SdkModel } from './model';
import { emitEnum, emitModel, emitUnion, emitUnknownMember } from './php-models';
import { emitOperations, emitRawService, emitRegistry, emitService } from './php-services';
export { constantName } from './php-source';

/** Where the PHP package lives, relative to the repository root. */
export const PHP_PACKAGE_DIR = 'packages/client-php';

/** Returns repository-relative paths → file contents. */
export function emitPhp(model: SdkModel): Map<string, string> {
  const ctx = new Context(model);
  const files = new Map<string, string>();
  const put = (relative: string, content: string) =>
    files.set(`${PHP_PACKAGE_DIR}/src/${relative}`, content);

  for (const resource of model.resources) {
    put(`Service/${resource.pascal}Service.php`, emitService(ctx, resource));
    put(`Service/${resource.pascal}RawService.php`, emitRawService(ctx, resource));
  }
  put('Service/ServiceRegistry.php', emitRegistry(model));
  put('Service/Operations.php', emitOperations(model));
  for (const m of model.models) {
    if (m.role === 'input' || ctx.pageContainers.has(m.name)) continue;
    put(`Model/${m.name}.php`, emitModel(ctx, m));
  }
  for (const e of model.enums) put(`Model/${e.name}.php`, emitEnum(e));
  for (const u of model.unions ?? []) {
    put(`Model/${u.name}.php`, emitUnion(ctx, u));
    put(`Model/Unknown${u.name}.php`, emitUnknownMember(ctx, u));
  }
  return files;
}

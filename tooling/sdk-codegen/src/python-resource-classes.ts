/** The four classes of a resource module (`X`, `XWithRawResponse`, their async twins). */
import type { Resource } from './model';
import { docstring, pyString } from './python-source';

/** The methods of one resource's four classes: sync and async, parsed and raw. */
export interface ResourceMethods {
  plain: string;
  raw: string;
  asyncPlain: string;
  asyncRaw: string;
}

/**
 * Hand-written methods a resource class inherits (`client.exports.wait`), from a module of the
 * package: the module, the sync base and the async base (each a `SyncAPIResource` /
 * `AsyncAPIResource` subclass), and the methods they add (for the docstring).
 */
export const HELPER_BASES: Record<
  string,
  { module: string; sync: string; async: string; methods: string[] }
> = {
  exports: {
    module: '..export_helpers',
    sync: 'ExportsHelpers',
    async: 'AsyncExportsHelpers',
    methods: ['wait', 'download_to'],
  },
  imports: {
    module: '..import_helpers',
    sync: 'ImportsHelpers',
    async: 'AsyncImportsHelpers',
    methods: ['wait'],
  },
};

/** The module's four classes: `X`, `XWithRawResponse` and their async twins. */
export function resourceClasses(cls: string, resource: Resource, methods: ResourceMethods): string {
  const rawCls = `${cls}WithRawResponse`;
  const asyncCls = `Async${cls}`;
  const asyncRawCls = `Async${cls}WithRawResponse`;
  const helpers = HELPER_BASES[resource.snake];
  let out = `\n__all__ = [${[cls, rawCls, asyncCls, asyncRawCls].map(pyString).join(', ')}]\n\n`;
  out += `\nclass ${cls}(${helpers?.sync ?? 'SyncAPIResource'}):\n`;
  out += docstring(
    `\`client.${resource.snake}\`: ${[...resource.operations.map((o) => o.method.snake), ...(helpers?.methods ?? [])].map((name) => `\`${name}\``).join(', ')}.`,
    '    ',
  );
  out += `\n    @cached_property\n    def with_raw_response(self) -> ${rawCls}:\n`;
  out += `        """The same methods, returning the raw \`APIResponse\` (status, headers, request id)."""\n`;
  out += `        return ${rawCls}(self._client)\n`;
  out += methods.plain;
  out += `\n\nclass ${rawCls}(SyncAPIResource):\n`;
  out += docstring(
    `\`client.${resource.snake}.with_raw_response\`: each method returns the \`APIResponse\`.`,
    '    ',
  );
  out += methods.raw;
  out += `\n\nclass ${asyncCls}(${helpers?.async ?? 'AsyncAPIResource'}):\n`;
  out += docstring(
    `\`client.${resource.snake}\` of \`AsyncPlatformClient\`: the methods of \`${cls}\`, awaited.`,
    '    ',
  );
  out += `\n    @cached_property\n    def with_raw_response(self) -> ${asyncRawCls}:\n`;
  out += `        """The same methods, returning the raw \`APIResponse\` (status, headers, request id)."""\n`;
  out += `        return ${asyncRawCls}(self._client)\n`;
  out += methods.asyncPlain;
  out += `\n\nclass ${asyncRawCls}(AsyncAPIResource):\n`;
  out += docstring(
    `\`client.${resource.snake}.with_raw_response\` of \`AsyncPlatformClient\`: each method returns the \`APIResponse\`.`,
    '    ',
  );
  out += methods.asyncRaw;
  return out;
}

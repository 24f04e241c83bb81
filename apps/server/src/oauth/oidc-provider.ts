import type * as OidcProvider from 'oidc-provider';

/**
 * Loads oidc-provider, an ES module, with Node's own `require` (Node 22.12+ and 24 require ES
 * modules without top-level await). Going through `process.getBuiltinModule` rather than this
 * file's `require` matters under Jest, whose module registry cannot load ES modules: the real
 * loader is used there too, so the tests run the same library code as production (see
 * `realm.ts` for the one consequence).
 *
 * oidc-provider supports Node 22 and 24 and warns at load on anything else; the server runs on
 * Node 24 (see `config/node-version.ts`), where it loads silently.
 */
export function loadOidcProvider(): typeof OidcProvider {
  const { createRequire } = process.getBuiltinModule('node:module');
  return createRequire(__filename)('oidc-provider') as typeof OidcProvider;
}

import type * as OidcProvider from 'oidc-provider';

/**
 * Loads oidc-provider, an ES module, with Node's own `require` (Node 20.19+ can require ES
 * modules without top-level await). Going through `process.getBuiltinModule` rather than this
 * file's `require` matters under Jest, whose module registry cannot load ES modules: the real
 * loader is used there too, so the tests run the same library code as production (see
 * `realm.ts` for the one consequence).
 *
 * oidc-provider declares Node 22 and prints one warning about it at load on Node 20; the e2e
 * suite drives every grant we use through it on Node 20.
 */
export function loadOidcProvider(): typeof OidcProvider {
  const { createRequire } = process.getBuiltinModule('node:module');
  return createRequire(__filename)('oidc-provider') as typeof OidcProvider;
}

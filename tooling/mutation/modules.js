// The modules `pnpm test:mutation` mutates, each with the test files that may kill its mutants
// (Stryker runs, for each mutant, only the tests among them that execute its code).
//
// To add a module: one entry. `mutate` is the source file and `tests` the test files (paths from
// the repository root); `package` is the workspace package whose Jest config runs them. The server's
// Jest config maps @platform/contract to the contract's source, so a contract module can be
// mutated against the server's suites. `threshold` overrides the default 85 % where a module
// has a reason to (say which in a comment).
'use strict';

/** A module's mutation score (killed + timed out, over all but compile errors) must reach this. */
const DEFAULT_THRESHOLD = 85;

/** @type {{ name: string, mutate: string, package: string, tests: string[], threshold?: number }[]} */
const MODULES = [
  {
    // The offboarding rule's half that judges a caller: who may act on whose credential.
    name: 'acting-as',
    mutate: 'apps/server/src/auth/acting-as.ts',
    package: 'apps/server',
    tests: [
      'apps/server/src/auth/acting-as.spec.ts',
      'apps/server/test/offboarding.e2e-spec.ts',
      'apps/server/test/offboarding-access.e2e-spec.ts',
      'apps/server/test/offboarding-sessions.e2e-spec.ts',
    ],
  },
  {
    name: 'effective-scopes',
    mutate: 'apps/server/src/auth/effective-scopes.ts',
    package: 'apps/server',
    tests: ['apps/server/test/members.e2e-spec.ts', 'apps/server/test/invitations.e2e-spec.ts'],
  },
  {
    name: 'url-guard',
    mutate: 'apps/server/src/webhooks/url-guard.ts',
    package: 'apps/server',
    tests: [
      'apps/server/src/webhooks/url-guard.spec.ts',
      'apps/server/src/webhooks/guarded-lookup.spec.ts',
      'apps/server/test/webhook-endpoints.e2e-spec.ts',
    ],
  },
  {
    name: 'list',
    mutate: 'packages/contract/src/list.ts',
    package: 'apps/server',
    tests: [
      'packages/contract/src/list.spec.ts',
      // The cursor parameter: list.ts takes the page and the keyset from it.
      'packages/contract/src/list-cursor.spec.ts',
      // The OpenAPI document is generated from the list builders: descriptions, x-enum-values.
      'packages/contract/src/openapi.spec.ts',
      'apps/server/test/students-list.e2e-spec.ts',
    ],
  },
  {
    name: 'delegation',
    mutate: 'apps/server/src/auth/delegation.ts',
    package: 'apps/server',
    tests: [
      'apps/server/test/delegation.e2e-spec.ts',
      'apps/server/test/delegation-tokens.e2e-spec.ts',
      'apps/server/test/tokens-api.e2e-spec.ts',
      'apps/server/test/webhook-endpoints.e2e-spec.ts',
      'apps/server/test/members.e2e-spec.ts',
      'apps/server/test/invitations.e2e-spec.ts',
      'apps/server/test/oauth.e2e-spec.ts',
      'apps/server/test/oauth-tokens.e2e-spec.ts',
    ],
  },
  {
    name: 'idempotency',
    mutate: 'apps/server/src/idempotency/idempotency.service.ts',
    package: 'apps/server',
    tests: [
      'apps/server/src/idempotency/idempotency.service.spec.ts',
      'apps/server/src/idempotency/idempotency-edges.spec.ts',
      'apps/server/src/idempotency/idempotency.interceptor.spec.ts',
      'apps/server/test/idempotency.e2e-spec.ts',
    ],
  },
  {
    name: 'client-webhooks',
    mutate: 'packages/client/src/webhooks.ts',
    package: 'packages/client',
    tests: [
      'packages/client/src/webhooks.spec.ts',
      'packages/client/src/webhook-refusals.spec.ts',
      'packages/client/src/webhook-vectors.spec.ts',
      'packages/client/src/webhook-delivery.spec.ts',
    ],
  },
  {
    name: 'signing',
    mutate: 'apps/server/src/webhooks/signing.ts',
    package: 'apps/server',
    tests: [
      'apps/server/src/webhooks/signing.spec.ts',
      'apps/server/test/webhook-delivery.e2e-spec.ts',
      'apps/server/test/webhook-endpoints.e2e-spec.ts',
    ],
  },
  {
    name: 'sliding-window',
    mutate: 'apps/server/src/rate-limit/sliding-window.store.ts',
    package: 'apps/server',
    tests: [
      'apps/server/src/rate-limit/sliding-window.store.spec.ts',
      'apps/server/test/rate-limit.e2e-spec.ts',
    ],
  },
];

function moduleNamed(name) {
  const found = MODULES.find((m) => m.name === name);
  if (!found) {
    throw new Error(
      `No mutation module "${name}"; known: ${MODULES.map((m) => m.name).join(', ')}`,
    );
  }
  return found;
}

module.exports = { DEFAULT_THRESHOLD, MODULES, moduleNamed };

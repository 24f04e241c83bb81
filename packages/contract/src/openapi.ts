import { generateOpenApi } from '@ts-rest/open-api';
import { contract } from './contract';
import { operationMetadata } from './operation';
import { IDEMPOTENCY_KEY_HEADER } from './resource';
import { ALL_SCOPES } from './scopes';

/** Every POST accepts it; the server replays the first response for 24 h (see README). */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header' as const,
  required: false,
  description:
    'Makes a POST safe to retry: the same key with the same body within 24 h returns the first response again (with `Idempotent-Replayed: true`) without doing the work twice; the same key with another body is 409. The SDK sends one on every POST.',
  schema: { type: 'string' as const, minLength: 1, maxLength: 255 },
};

/** The OpenAPI 3 document of the contract; `pnpm --filter @platform/contract openapi` writes it. */
export function generateOpenApiDocument(version: string) {
  return generateOpenApi(
    contract,
    {
      info: {
        title: 'Platform API',
        version,
        description:
          "The education platform's public API. Every path is also served under `/api/v1`. Errors are RFC 9457 problem details; lists share one pagination, filtering and sorting convention.",
      },
      servers: [{ url: 'http://localhost:3000', description: 'pnpm dev' }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: `A personal access token (pat_…) or an OAuth 2.0 access token. Scopes: ${ALL_SCOPES.join(', ')}.`,
          },
        },
      },
    },
    {
      setOperationId: 'concatenated-path',
      operationMapper: (op, route) => {
        const metadata = operationMetadata(route);
        const scope = metadata?.scope;
        return {
          ...op,
          ...(route.method === 'POST' && {
            parameters: [...(op.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER],
          }),
          ...(scope && { security: [{ bearer: [scope] }], 'x-required-scope': scope }),
          ...(metadata && scope === null && { security: [{ bearer: [] }] }),
          ...(metadata?.delegation && { 'x-delegation': metadata.delegation }),
        };
      },
    },
  );
}

import { generateOpenApi } from '@ts-rest/open-api';
import { contract } from './contract';
import { operationMetadata } from './operation';
import { ALL_SCOPES } from './scopes';

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
        const scope = operationMetadata(route)?.scope;
        return {
          ...op,
          ...(scope && { security: [{ bearer: [scope] }], 'x-required-scope': scope }),
        };
      },
    },
  );
}

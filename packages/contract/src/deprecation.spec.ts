import { initContract } from '@ts-rest/core';
import { contract } from './contract';
import {
  deprecated,
  deprecationAnchor,
  listDeprecations,
  requestDeprecations,
} from './deprecation';
import { generateOpenApiDocument } from './openapi';
import { operation } from './operation';
import { z } from './zod-openapi';

// Nothing in the real API is deprecated: this test resource is.
const c = initContract();
const SINCE = '2026-01-01';
const legacyContract = c.router({
  list: {
    method: 'GET',
    path: '/v1/legacy-things',
    summary: 'List legacy things',
    query: z.object({
      page: z.coerce.number().int().optional(),
      colour: deprecated(z.string().optional().describe('Filter by colour.'), {
        since: SINCE,
        sunset: '2026-07-01',
        replacement: '`color`',
      }),
    }),
    responses: { 200: z.object({ data: z.array(z.string()) }) },
    metadata: operation({
      scope: 'students:read',
      deprecated: { since: SINCE, sunset: '2027-01-01', replacement: '`students.list`' },
    }),
  },
  create: {
    method: 'POST',
    path: '/v1/legacy-things',
    summary: 'Create a legacy thing',
    body: z
      .object({
        name: z.string(),
        nickname: deprecated(z.string().optional(), {
          since: SINCE,
          link: 'https://docs.school.test/migrate/nickname',
        }),
        tags: z
          .array(
            z.object({
              label: z.string(),
              weight: deprecated(z.number(), { since: SINCE }).optional(),
            }),
          )
          .optional(),
      })
      .openapi({ title: 'LegacyThingCreate' }),
    responses: { 201: z.object({ name: z.string() }) },
    metadata: operation({ scope: 'students:write' }),
  },
});

type Operation = {
  deprecated?: boolean;
  description?: string;
  'x-deprecation'?: unknown;
  parameters: {
    name: string;
    deprecated?: boolean;
    description?: string;
    schema: Record<string, unknown>;
    'x-deprecation'?: unknown;
  }[];
};

/** A deprecated operation or parameter as the document marks it: the flag, the dates, the note. */
function expectMarked(
  part: { deprecated?: boolean; description?: string; 'x-deprecation'?: unknown },
  dates: { sunset: string; replacement: string },
  description: string,
) {
  expect(part.deprecated).toBe(true);
  expect(part['x-deprecation']).toEqual({ since: SINCE, ...dates });
  expect(part.description).toBe(description);
}

describe('deprecation in the OpenAPI document', () => {
  const doc = generateOpenApiDocument('test', { router: { ...contract, legacy: legacyContract } });
  const paths = doc.paths as Record<string, Record<string, Operation>>;
  const schemas = (doc.components as { schemas: Record<string, Record<string, unknown>> }).schemas;

  it('marks a deprecated operation, with its dates and migration note', () => {
    const list = paths['/v1/legacy-things']!.get!;
    expectMarked(
      list,
      { sunset: '2027-01-01', replacement: '`students.list`' },
      'Deprecated since 2026-01-01; it stops working after 2027-01-01 (Sunset). Use `students.list` instead. Migration note: /docs/deprecations#get-v1-legacy-things',
    );
    expect(paths['/v1/legacy-things']!.post!.deprecated).toBeUndefined();
    // The headers a deprecated operation answers with are declared on its responses.
    const headers = (list as unknown as { responses: Record<string, { headers: object }> })
      .responses['200']!.headers;
    expect(Object.keys(headers)).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']));
  });

  it('marks a deprecated query parameter on the parameter, not its schema', () => {
    const parameters = paths['/v1/legacy-things']!.get!.parameters;
    const colour = parameters.find((p) => p.name === 'colour')!;
    expectMarked(
      colour,
      { sunset: '2026-07-01', replacement: '`color`' },
      'Filter by colour. Deprecated since 2026-01-01; it stops working after 2026-07-01 (Sunset). Use `color` instead.',
    );
    expect(colour.schema).toEqual({ type: 'string' });
    expect(parameters.find((p) => p.name === 'page')!.deprecated).toBeUndefined();
  });

  it('marks a deprecated body field (nested ones too) as a deprecated property', () => {
    const create = schemas.LegacyThingCreate as {
      properties: Record<string, Record<string, unknown>>;
    };
    expect(create.properties.nickname).toMatchObject({
      deprecated: true,
      'x-deprecation': { since: SINCE, link: 'https://docs.school.test/migrate/nickname' },
      description:
        'Deprecated since 2026-01-01. Migration note: https://docs.school.test/migrate/nickname',
    });
    expect(create.properties.name!.deprecated).toBeUndefined();
    const tag = (create.properties.tags as { items: { properties: Record<string, unknown> } }).items
      .properties;
    expect(tag.weight).toMatchObject({ deprecated: true });
  });

  it('leaves the real API without a deprecated part', () => {
    expect(listDeprecations(contract)).toEqual([]);
    expect(JSON.stringify(generateOpenApiDocument('test'))).not.toContain('"deprecated"');
  });
});

describe('requestDeprecations', () => {
  const { list, create } = legacyContract;

  it('names the operation and each deprecated parameter or field the request sends', () => {
    expect(requestDeprecations(list, { query: {} }).map((p) => p.part)).toEqual(['operation']);
    expect(requestDeprecations(list, { query: { colour: 'red' } }).map((p) => p.part)).toEqual([
      'operation',
      'query.colour',
    ]);
    expect(requestDeprecations(create, { body: { name: 'x' } })).toEqual([]);
    expect(
      requestDeprecations(create, {
        body: { name: 'x', nickname: 'y', tags: [{ label: 'a' }, { label: 'b', weight: 2 }] },
      }).map((p) => p.part),
    ).toEqual(['body.nickname', 'body.tags[].weight']);
  });

  it('lists every deprecated part with the anchor of its docs entry', () => {
    expect(
      listDeprecations({ legacy: legacyContract }).map((p) => [p.operationId, p.part]),
    ).toEqual([
      ['legacy.list', 'operation'],
      ['legacy.list', 'query.colour'],
      ['legacy.create', 'body.nickname'],
      ['legacy.create', 'body.tags[].weight'],
    ]);
    expect(deprecationAnchor(list, 'query.colour')).toBe('get-v1-legacy-things--query-colour');
  });

  it('refuses a sunset that is not a date after the deprecation', () => {
    expect(() => deprecated(z.string(), { since: '2026-01-01', sunset: '2025-12-31' })).toThrow(
      /not after/,
    );
    expect(() => operation({ scope: null, deprecated: { since: '1 Jan 2026' } })).toThrow(
      /YYYY-MM-DD/,
    );
  });
});

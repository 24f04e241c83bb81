/**
 * The API reference's samples as users read them (docs/api-reference.md, and the same samples as
 * `x-codeSamples` in openapi.json, which /docs shows): every id a sample passes has the prefix
 * the contract gives that kind of id, and the document's samples are the reference's.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
type Json = Record<string, unknown>;
const openapi = JSON.parse(
  readFileSync(path.join(ROOT, 'packages/contract/openapi.json'), 'utf8'),
) as { paths: Record<string, Record<string, Json>>; components: { schemas: Record<string, Json> } };
const reference = readFileSync(path.join(ROOT, 'docs/api-reference.md'), 'utf8');

interface Sample {
  http: string;
  path: string;
  blocks: Record<'ts' | 'php' | 'python', string>;
}

/** Each operation of the reference: `### …`, then `` `GET /v1/…` ``, then ts, php and python blocks. */
function referenceSamples(): Sample[] {
  const samples: Sample[] = [];
  for (const section of reference.split(/^### /m).slice(1)) {
    const route = /^`(GET|POST|PATCH|PUT|DELETE) (\S+)`/m.exec(section);
    if (!route) continue;
    const block = (lang: string) =>
      new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\\n\`\`\``).exec(section)?.[1] ?? '';
    samples.push({
      http: route[1]!,
      path: route[2]!,
      blocks: { ts: block('ts'), php: block('php'), python: block('python') },
    });
  }
  return samples;
}

const resolve = (schema: Json | undefined): Json | undefined => {
  const ref = schema?.$ref;
  return typeof ref === 'string' ? openapi.components.schemas[ref.split('/').pop()!] : schema;
};

/**
 * The prefix of an id schema's pattern: `^stu_[0-9A-HJKMNP-TV-Z]{26}$` → `stu`, and of a
 * reference that also takes `ext:<external_id>`: `^(?:stu_…|ext:…)$` → `stu`.
 */
const prefixOf = (schema: Json | undefined): string | undefined => {
  const pattern = resolve(schema)?.pattern;
  return typeof pattern === 'string' ? /^\^(?:\(\?:)?([a-z]+)_/.exec(pattern)?.[1] : undefined;
};

/**
 * The prefix of the `{id}` in a path, as the contract says it: the `id` of what the same path's
 * GET answers, or of its parent's (`/v1/webhook_endpoints/{id}/deliveries` → the endpoint's); for
 * a path with no GET (`DELETE /v1/user/sessions/{id}`), of what its other operation answers.
 */
function pathIdPrefix(pathTemplate: string): string {
  const item = `${pathTemplate.slice(0, pathTemplate.indexOf('{id}'))}{id}`;
  const operations = openapi.paths[item] ?? {};
  const answering = (operations.get ?? Object.values(operations)[0]) as
    { responses: Record<string, { content?: Record<string, { schema: Json }> }> } | undefined;
  let schema = resolve(answering?.responses['200']?.content?.['application/json']?.schema);
  // A union of events: each member's id has the same prefix.
  const members = (schema?.oneOf ?? schema?.anyOf) as Json[] | undefined;
  if (members) schema = resolve(members[0]);
  const prefix = prefixOf((schema?.properties as Json | undefined)?.id as Json | undefined);
  if (!prefix) throw new Error(`${item} answers no prefixed id`);
  return prefix;
}

/** `field: 'xxx_…'` pairs of a sample, in any of the three syntaxes. */
function idArguments(source: string): { field: string | undefined; id: string }[] {
  const found: { field: string | undefined; id: string }[] = [];
  const pattern = /(?:['"]?(\w+)['"]?\s*(?::|=>|=)\s*)?['"]([a-z]+_[0-9A-HJKMNP-TV-Z]{26})['"]/g;
  for (const match of source.matchAll(pattern)) found.push({ field: match[1], id: match[2]! });
  return found;
}

describe('the API reference samples', () => {
  const samples = referenceSamples();

  it('cover every operation of the document', () => {
    const operations = Object.values(openapi.paths).flatMap((item) => Object.keys(item));
    expect(samples).toHaveLength(operations.length);
  });

  it.each(samples.map((s) => [`${s.http} ${s.path}`, s] as const))(
    'pass ids with the prefix the contract gives them: %s',
    (_, sample) => {
      const operation = openapi.paths[sample.path]![sample.http.toLowerCase()]!;
      const body = resolve(
        (operation.requestBody as { content?: Record<string, { schema: Json }> } | undefined)
          ?.content?.['application/json']?.schema,
      );
      const parameters = (operation.parameters ?? []) as { name: string; schema: Json }[];
      for (const [language, source] of Object.entries(sample.blocks)) {
        const ids = idArguments(source);
        if (sample.path.includes('{id}')) {
          // The path's id comes first in every language.
          expect([language, ids[0]?.id.split('_')[0]]).toEqual([
            language,
            pathIdPrefix(sample.path),
          ]);
        }
        for (const { field, id } of ids.slice(sample.path.includes('{id}') ? 1 : 0)) {
          const schema =
            ((body?.properties as Json | undefined)?.[field ?? ''] as Json | undefined) ??
            parameters.find((p) => p.name === field)?.schema;
          expect([language, field, id.split('_')[0]]).toEqual([language, field, prefixOf(schema)]);
        }
      }
    },
  );

  it('are the x-codeSamples of each operation in openapi.json', () => {
    for (const sample of samples) {
      const operation = openapi.paths[sample.path]![sample.http.toLowerCase()]!;
      expect(operation['x-codeSamples']).toEqual([
        { lang: 'TypeScript', label: 'TypeScript', source: sample.blocks.ts },
        { lang: 'PHP', label: 'PHP', source: sample.blocks.php },
        { lang: 'Python', label: 'Python', source: sample.blocks.python },
      ]);
    }
  });
});

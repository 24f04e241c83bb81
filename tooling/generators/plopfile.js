// `pnpm gen resource <plural_name> [id prefix]`: a new resource end to end, written from
// templates (resource/*.hbs) and registered where the code lists resources. What it writes is
// described in docs/adding-a-resource.md; test: apps/server/test/generator.e2e-spec.ts.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** `guardians` → `guardian`, `classes` → `class`, `categories` → `category`. */
function singularOf(plural) {
  if (plural.endsWith('ies')) return `${plural.slice(0, -3)}y`;
  if (/(ss|x|ch|sh)es$/.test(plural)) return plural.slice(0, -2);
  return plural.replace(/s$/, '');
}

/** The id prefixes in use: the registry's resources' and the API's other objects' (ids.ts). */
function usedPrefixes() {
  return [
    ...read('packages/contract/src/registry.ts').matchAll(/^\s+prefix: '([a-z]+)',$/gm),
    ...read('packages/contract/src/ids.ts').matchAll(/^\s+\w+: '([a-z]+)',$/gm),
  ].map((m) => m[1]);
}

/** Inserts `text` before the first match of `before` (a RegExp) in `file`, or fails naming it. */
function insertBefore(file, before, text) {
  return {
    type: 'modify',
    path: `{{root}}/${file}`,
    transform: (content, data) => {
      const match = before.exec(content);
      if (!match) throw new Error(`${file}: found no ${before} to register ${data.plural} before`);
      return content.slice(0, match.index) + text(data) + content.slice(match.index);
    },
  };
}

/** The generator's questions: the plural name and the id prefix, each checked against what exists. */
const PROMPTS = [
  {
    type: 'input',
    name: 'plural',
    message: 'Plural snake_case name (the collection, table and scope), e.g. guardians',
    validate: (value) => {
      if (!/^[a-z][a-z_]*s$/.test(value)) return 'lower snake_case ending in s, e.g. guardians';
      if (
        new RegExp(`^ {2}${value}: \\{$`, 'm').test(read('packages/contract/src/registry.ts')) ||
        read('packages/contract/src/scopes.ts').includes(`'${value}'`)
      )
        return `${value} is already a resource or a scope`;
      return true;
    },
  },
  {
    type: 'input',
    name: 'prefix',
    message: 'Id prefix (three letters, unused)',
    default: (answers) => answers.plural.replace(/_/g, '').slice(0, 3),
    validate: (value) =>
      !/^[a-z]{3}$/.test(value)
        ? 'three lower-case letters'
        : usedPrefixes().includes(value)
          ? `${value} is taken (packages/contract/src/registry.ts, ids.ts)`
          : true,
  },
];

/** The files written from the templates. */
function templateActions(dash, server, tpl) {
  return [
    {
      type: 'add',
      path: `{{root}}/packages/contract/src/${dash}.ts`,
      templateFile: tpl('contract.ts.hbs'),
    },
    {
      type: 'add',
      path: `${server}/{{dashCase singular}}.entity.ts`,
      templateFile: tpl('entity.ts.hbs'),
    },
    {
      type: 'add',
      path: `${server}/migrations/{{timestamp}}-${dash}.ts`,
      templateFile: tpl('migration.ts.hbs'),
    },
    { type: 'add', path: `${server}/${dash}.schema.ts`, templateFile: tpl('schema.ts.hbs') },
    { type: 'add', path: `${server}/${dash}.module.ts`, templateFile: tpl('module.ts.hbs') },
    { type: 'add', path: `${server}/${dash}.service.ts`, templateFile: tpl('service.ts.hbs') },
    {
      type: 'add',
      path: `${server}/${dash}.controller.ts`,
      templateFile: tpl('controller.ts.hbs'),
    },
    {
      type: 'add',
      path: `{{root}}/apps/server/test/${dash}.e2e-spec.ts`,
      templateFile: tpl('e2e-spec.ts.hbs'),
    },
  ];
}

/** Registrations in the contract and the TypeScript SDK's ids. */
function contractActions(dash, cp, P) {
  return [
    // The contract: its module, the router, the id prefix, the scope, the events.
    insertBefore(
      'packages/contract/src/index.ts',
      /^export \{ API_VERSION/m,
      () => `export * from './${dash}';\n`,
    ),
    insertBefore(
      'packages/contract/src/contract.ts',
      /^import /m,
      () => `import { ${cp}Contract } from './${dash}';\n`,
    ),
    insertBefore(
      'packages/contract/src/contract.ts',
      /^ {2}events: typeof eventsContract;/m,
      () => `  ${cp}: typeof ${cp}Contract;\n`,
    ),
    insertBefore(
      'packages/contract/src/contract.ts',
      /^ {2}events: eventsContract,/m,
      () => `  ${cp}: ${cp}Contract,\n`,
    ),
    // The contract's registry entry: the id prefix, the scope, the events, the export.
    insertBefore(
      'packages/contract/src/registry.ts',
      /^\} as const satisfies Record<string, ResourceEntry>;/m,
      (d) =>
        `  ${d.plural}: {\n    singular: '${d.singular}',\n    prefix: '${d.prefix}',\n` +
        `    scope: '${d.plural}',\n    events: ['created', 'updated', 'deleted'],\n` +
        `    exported: true,\n    references: [],\n  },\n`,
    ),
    // The TypeScript SDK's id types (packages/client/src/ids.ts, checked against the contract).
    insertBefore(
      'packages/client/src/ids.ts',
      /^ {2}event: 'evt';/m,
      (d) => `  ${d.singular}: '${d.prefix}';\n`,
    ),
    // Each event's payload schema (the types come from the registry entry).
    insertBefore(
      'packages/contract/src/events.ts',
      /^import /m,
      () => `import { ${P}Schema } from './${dash}';\n`,
    ),
    insertBefore(
      'packages/contract/src/events.ts',
      /^ {2}ping: z\.object/m,
      (d) =>
        ['created', 'updated'].map((e) => `  '${d.singular}.${e}': ${P}Schema,\n`).join('') +
        `  '${d.singular}.deleted': deletedSchema('${d.singular}', 'Deleted${P}'),\n`,
    ),
  ];
}

/** Registrations in the server's resource list. */
function serverActions(dash, singularDash, P, PP) {
  return [
    // The server's registry entry: the entity, the module, its tables. The app's modules and
    // schema, the exports, the field checks and the contract walk derive from it.
    insertBefore(
      'apps/server/src/resources.ts',
      /^import type \{ ModuleSchema \}/m,
      (d) =>
        `import { ${P} } from './${dash}/${singularDash}.entity';\n` +
        `import { ${PP}Module } from './${dash}/${dash}.module';\n` +
        `import { ${d.plural.toUpperCase()}_SCHEMA } from './${dash}/${dash}.schema';\n`,
    ),
    insertBefore(
      'apps/server/src/resources.ts',
      /^\} as const satisfies Record<ResourceName, ServerResource>;/m,
      (d) =>
        `  ${d.plural}: { entity: ${P}, module: ${PP}Module, schema: ${d.plural.toUpperCase()}_SCHEMA },\n`,
    ),
  ];
}

/** Formatting, then everything derived from the contract: OpenAPI, the three SDKs, the scope table. */
function deriveAction(dash) {
  return function derive(data) {
    const run = (cmd, args) => execFileSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });
    run('pnpm', [
      'exec',
      'prettier',
      '--write',
      '--log-level=warn',
      `packages/contract/src`,
      `apps/server/src/${dash}`,
      `apps/server/test/${dash}.e2e-spec.ts`,
      'apps/server/src/resources.ts',
      'packages/client/src/ids.ts',
    ]);
    if (process.env.PLATFORM_GEN_SKIP_SDKS === '1')
      return 'skipped pnpm generate:sdks (PLATFORM_GEN_SKIP_SDKS=1)';
    // generate:sdks builds only the codegen (turbo-cached) and the contract's JavaScript for
    // openapi and scope-table (no declarations), then writes the SDKs and openapi.json.
    run('pnpm', ['generate:sdks']);
    // The scope table reads the dist/scope-table.js that generate:sdks just built.
    run(process.execPath, ['packages/contract/scripts/write-scope-table.js']);
    return `regenerated the OpenAPI document, the SDKs and the scope table for ${data.plural}`;
  };
}

/** Every action for a resource named in `answers`, which it completes with the derived names. */
function resourceActions(answers) {
  const singular = singularOf(answers.plural);
  const timestamp = Date.now();
  Object.assign(answers, {
    root: ROOT,
    singular,
    timestamp: String(timestamp),
    timestampNext: String(timestamp + 1),
  });
  const dash = answers.plural.replace(/_/g, '-');
  const server = `{{root}}/apps/server/src/${dash}`;
  const tpl = (name) => path.join(__dirname, 'resource', name);
  const words = (name) => name.split('_');
  const cap = (w) => w.charAt(0).toUpperCase() + w.slice(1);
  const P = words(singular).map(cap).join('');
  const PP = words(answers.plural).map(cap).join('');
  const cp = PP.charAt(0).toLowerCase() + PP.slice(1);
  const singularDash = singular.replace(/_/g, '-');
  return [
    ...templateActions(dash, server, tpl),
    ...contractActions(dash, cp, P),
    ...serverActions(dash, singularDash, P, PP),
    deriveAction(dash),
  ];
}

module.exports = function (plop) {
  plop.setHelper('sentence', (name) => String(name).replace(/_/g, ' '));

  plop.setGenerator('resource', {
    description:
      'a resource end to end: contract, entity, migration, module, e2e test, registrations',
    prompts: PROMPTS,
    actions: resourceActions,
  });
};

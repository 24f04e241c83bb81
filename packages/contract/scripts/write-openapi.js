// Writes openapi.json from the built contract. Run after `pnpm build`:
//   pnpm --filter @platform/contract openapi
const fs = require('node:fs');
const path = require('node:path');
const { generateOpenApiDocument } = require('../dist/openapi.js');
const { version } = require('../package.json');
// The API reference's samples, written by `pnpm generate:sdks` (tooling/sdk-codegen).
const codeSamples = require('../code-samples.json');

const target = path.join(__dirname, '..', 'openapi.json');
fs.writeFileSync(
  target,
  `${JSON.stringify(generateOpenApiDocument(version, { codeSamples }), null, 2)}\n`,
);
console.log(`wrote ${path.relative(process.cwd(), target)}`);

// Rewrites the operation → scope table and the rate-limit cost table in docs/api-guide.md from
// the built contract.
//   pnpm --filter @platform/contract build && pnpm --filter @platform/contract scope-table
const fs = require('node:fs');
const path = require('node:path');
const { withScopeTable } = require('../dist/scope-table.js');

const guide = path.join(__dirname, '..', '..', '..', 'docs', 'api-guide.md');
fs.writeFileSync(guide, withScopeTable(fs.readFileSync(guide, 'utf8')));
console.log(`wrote the scope and cost tables in ${path.relative(process.cwd(), guide)}`);

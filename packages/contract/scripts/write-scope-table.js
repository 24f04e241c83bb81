// Rewrites the operation → scope table in the repository README from the built contract.
//   pnpm --filter @platform/contract build && pnpm --filter @platform/contract scope-table
const fs = require('node:fs');
const path = require('node:path');
const { withScopeTable } = require('../dist/scope-table.js');

const readme = path.join(__dirname, '..', '..', '..', 'README.md');
fs.writeFileSync(readme, withScopeTable(fs.readFileSync(readme, 'utf8')));
console.log(`wrote the scope table in ${path.relative(process.cwd(), readme)}`);

#!/usr/bin/env node
/**
 * Writes the Python client's generated files from a model JSON dump, until `main.ts` (which
 * writes every language from the contract) lands:
 *   pnpm --filter @platform/sdk-codegen build && node tooling/sdk-codegen/scripts/emit-python-local.js [model.json]
 * Generated files that the model no longer produces are deleted.
 */
const fs = require('node:fs');
const path = require('node:path');
const { emitPython, PYTHON_ROOT } = require('../dist/python');

const root = path.resolve(__dirname, '../../..');
const modelPath = path.resolve(process.argv[2] ?? path.join(__dirname, '../fixtures/model.json'));
const files = emitPython(JSON.parse(fs.readFileSync(modelPath, 'utf8')));
for (const dir of ['resources', 'types']) {
  const abs = path.join(root, PYTHON_ROOT, dir);
  for (const name of fs.existsSync(abs) ? fs.readdirSync(abs) : []) {
    const rel = `${PYTHON_ROOT}/${dir}/${name}`;
    if (name.endsWith('.py') && !files.has(rel)) fs.rmSync(path.join(root, rel));
  }
}
for (const [rel, content] of files) {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), content);
}
console.log(`wrote ${files.size} files from ${path.relative(root, modelPath)}`);

// Which test files of a package can have another outcome in another deployment: those that read
// the variable naming it (TEST_DATABASE_URL), themselves or through a file they import from the
// same package (test/support/server.ts). A file that never reads it runs the same everywhere, so
// CI runs it once. Imports are followed statically, as tooling/mutation/src/inputs.js does.
const fs = require('node:fs');
const path = require('node:path');

const TEST = /\.(?:spec|e2e-spec)\.ts$/;
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"](\.[^'"\n]*)['"]/g;
const SUFFIXES = ['', '.ts', '.js', '/index.ts', '/index.js'];

function testFiles(dir) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...testFiles(file));
    else if (TEST.test(entry.name)) found.push(file);
  }
  return found;
}

function resolve(from, specifier) {
  const base = path.resolve(path.dirname(from), specifier);
  for (const suffix of SUFFIXES) {
    const file = base + suffix;
    if (fs.existsSync(file) && fs.statSync(file).isFile()) return file;
  }
  return null;
}

/** The package's test files (absolute paths) that read `variable` directly or through imports. */
function suitesReading(rootDir, variable) {
  const reads = new Map();
  const readsVariable = (file, seen = new Set()) => {
    if (reads.has(file)) return reads.get(file);
    if (seen.has(file)) return false;
    seen.add(file);
    const source = fs.readFileSync(file, 'utf8');
    let result = source.includes(variable);
    for (const match of result ? [] : source.matchAll(SPECIFIER)) {
      const imported = resolve(file, match[1]);
      if (imported && imported.startsWith(rootDir) && readsVariable(imported, seen)) {
        result = true;
        break;
      }
    }
    reads.set(file, result);
    return result;
  };
  return testFiles(rootDir).filter((file) => readsVariable(file));
}

module.exports = { suitesReading };

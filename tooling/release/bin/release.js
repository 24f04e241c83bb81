#!/usr/bin/env node
// pnpm release [--dry-run] [--out DIR]: see docs/releasing.md.
'use strict';
const path = require('node:path');
const { release } = require('../src/release');

const args = process.argv.slice(2);
const unknown = args.filter(
  (a, i) => a !== '--dry-run' && a !== '--out' && args[i - 1] !== '--out',
);
if (unknown.length > 0) {
  console.error(
    `release: unknown argument(s) ${unknown.join(' ')}; usage: pnpm release [--dry-run] [--out DIR]`,
  );
  process.exit(2);
}
const dryRun = args.includes('--dry-run');
const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : undefined;
const root = path.resolve(__dirname, '../../..');
try {
  const { version, target, manifest, contextFiles } = release(root, { dryRun, out });
  console.log(
    `\nrelease ${version}: ${manifest.artefacts.length} artefacts in ${path.relative(process.cwd(), target)}`,
  );
  for (const a of manifest.artefacts)
    console.log(`  ${a.sha256.slice(0, 12)}  ${String(a.bytes).padStart(9)}  ${a.file}`);
  console.log(
    `  (server image context: ${contextFiles} files; CHANGELOG.md, manifest.json, SHA256SUMS)`,
  );
  console.log(
    [
      '',
      dryRun
        ? 'Dry run: nothing published. A release would next:'
        : 'Built. Publishing is not automated here; a release would next:',
      '  npm publish npm/*.tgz (the client; the contract is private)',
      '  twine upload python/*',
      `  git tag v${version} and push it (Packagist reads the PHP package from the tag)`,
      `  docker build -t platform-server:${version} - < server/server-image-context-${version}.tar.gz, then push`,
      '  attach CHANGELOG.md, manifest.json and SHA256SUMS to the release notes',
    ].join('\n'),
  );
} catch (error) {
  console.error(`release: ${error.message}`);
  process.exit(1);
}

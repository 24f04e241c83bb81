import { defineConfig } from 'tsup';

export default defineConfig([
  {
    // `@platform/client/webhooks` is the verifier alone, for receivers that call no API.
    entry: { index: 'src/index.ts', webhooks: 'src/webhooks.ts' },
    format: ['cjs', 'esm'],
    dts: true,
    sourcemap: true,
    // Everything but the command, which the second build writes at the same time.
    clean: ['**/*', '!listen.js'],
    // Node 18+ and browsers: nothing newer than ES2022, nothing from node: in the bundle.
    target: 'es2022',
    platform: 'neutral',
    // No runtime dependencies: everything the SDK runs is in the bundle.
    noExternal: [/.*/],
  },
  {
    // The `platform-listen` command (cli/): Node only, one file with the SDK bundled in.
    entry: { listen: 'cli/listen-bin.ts' },
    format: ['cjs'],
    target: 'node18',
    platform: 'node',
    banner: { js: '#!/usr/bin/env node' },
    noExternal: [/.*/],
  },
]);

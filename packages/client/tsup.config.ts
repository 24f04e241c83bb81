import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['cjs', 'esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2022',
  // Node 20+ and browsers alike: nothing from node: may end up in the bundle.
  platform: 'neutral',
});

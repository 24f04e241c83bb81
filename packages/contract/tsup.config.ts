import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', openapi: 'src/openapi.ts', 'scope-table': 'src/scope-table.ts' },
  format: ['cjs', 'esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2022',
});

import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  platform: 'node',
  // The contract is private and the client is bundled with it: only the database drivers
  // (pg, and better-sqlite3's native addon) are installed next to the package.
  noExternal: [/^@platform\//, /^zod/, /^@ts-rest\//, /^@anatine\//],
  external: ['pg', 'better-sqlite3'],
});

import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { precompress } from './precompress.mts';

// Served by the API server under /portal on its own origin (apps/server/src/portal), so every
// URL is absolute under /portal/ and the API and OAuth endpoints are same-origin: no proxy, no CORS.
export default defineConfig({
  base: '/portal/',
  // precompress: a .br and a .gz beside each built file, which the server sends by Accept-Encoding.
  plugins: [react(), precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Hashed names under assets/: the server caches them for a year (immutable).
    assetsDir: 'assets',
    sourcemap: false,
    rolldownOptions: {
      output: {
        // Each page is its own chunk (src/lazy-pages.tsx), and what only one page uses goes with
        // it (chart.js with Usage). React and React DOM, which every page needs and which change
        // only with an upgrade, are one vendor chunk that stays cached across portal releases.
        codeSplitting: {
          groups: [{ name: 'react', test: /node_modules[\\/](?:react|react-dom|scheduler)[\\/]/ }],
        },
      },
    },
  },
});

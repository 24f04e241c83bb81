import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the API server under /portal on its own origin (apps/server/src/portal), so every
// URL is absolute under /portal/ and the API and OAuth endpoints are same-origin: no proxy, no CORS.
export default defineConfig({
  base: '/portal/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Hashed names under assets/: the server caches them for a year (immutable).
    assetsDir: 'assets',
    sourcemap: false,
  },
});

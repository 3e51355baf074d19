import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import tailwindcss from '@tailwindcss/vite';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The operator console, built by `npm install` (the `prepare` script) into
 * admin-ui/dist and served by the service at /admin (server/http/console.ts).
 * The page runs under `script-src 'self'; style-src 'self'`, so the build must
 * put nothing inline: no module-preload polyfill (Vite inlines it otherwise),
 * no assets turned into data: URLs (fonts would be refused), CSS as a file.
 */
export default defineConfig({
  root: here,
  base: '/admin/',
  plugins: [react(), tailwindcss()],
  logLevel: 'warn',
  clearScreen: false,
  build: {
    outDir: path.join(here, 'dist'),
    emptyOutDir: true,
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1500,
  },
});

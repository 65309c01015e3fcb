import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The gateway serves dist/ at `/` (services/gateway/src/dashboard): hashed files under /assets.
// `npm run dev -w apps/dashboard` proxies /api and /dev to a gateway on GATEWAY_URL.
const gateway = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', assetsDir: 'assets', sourcemap: false },
  server: { proxy: { '/api': gateway, '/dev': gateway } },
});

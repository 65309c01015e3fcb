import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin, type ProxyOptions } from 'vite';

// The gateway serves dist/ at `/` (services/gateway/src/dashboard): hashed files under /assets.
// `npm run dev -w apps/dashboard` proxies /api and /dev to a gateway at GATEWAY_URL (npm start's
// by default), as from the gateway's own origin (its Origin check), and signs in through dev-idp.
const gateway = new URL(process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080');
const toGateway: ProxyOptions = {
  target: gateway.origin,
  configure: (proxy) =>
    proxy.on('proxyReq', (request) => request.setHeader('origin', gateway.origin)),
};

/** In development only: what the gateway writes into the page (dev-idp's sign-in at /dev/). */
const devSignIn: Plugin = {
  name: 'dev-sign-in',
  apply: 'serve',
  transformIndexHtml: (html) =>
    html.replace('</head>', '<meta name="platform-dev-idp" content="/dev/"></head>'),
};

export default defineConfig({
  plugins: [react(), devSignIn],
  build: { outDir: 'dist', assetsDir: 'assets', sourcemap: false },
  server: { proxy: { '/api': toGateway, '/dev': toGateway } },
});

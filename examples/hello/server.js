// The sample app of the README's first deploy: a web server on $PORT that says hello.
'use strict';
const http = require('node:http');

const port = Number(process.env.PORT ?? 3000);
const greeting = process.env.GREETING ?? 'Hello from your first deployment!';

const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    return;
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><title>hello</title><h1>${greeting.replace(/</g, '&lt;')}</h1>\n`);
});
server.listen(port, () => console.log(`hello listening on ${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));

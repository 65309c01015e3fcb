import { request } from 'node:http';

/**
 * `GET url` of a deployed app (`http://<serviceId>.localhost:<port>/…`), sent to 127.0.0.1 with
 * that Host: `.localhost` names resolve to this machine in browsers, not always in Node. No
 * connection is kept.
 */
export function getApp(url: string): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port || 80,
        path: `${target.pathname}${target.search}`,
        headers: { host: target.host },
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

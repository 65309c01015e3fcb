import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A plain HTTP proxy on 127.0.0.1 in front of the gateway that can drop its open connections,
 * as a flaky network does. Cookies ignore ports, so a browser signed in at the gateway is
 * signed in here too; it records each request's path and headers, and the status of its answer.
 */
export async function startCuttingProxy(target: string) {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  const requests: { path: string; headers: IncomingHttpHeaders; status?: number }[] = [];
  /** The event (`data: <line>` and its blank line) after which the next stream is dropped. */
  let cutAfter: string | undefined;
  const server = createServer((req, res) => {
    const record: (typeof requests)[number] = { path: req.url ?? '', headers: req.headers };
    requests.push(record);
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        record.status = answer.statusCode;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        const marker = answer.headers['content-type']?.startsWith('text/event-stream')
          ? cutAfter
          : undefined;
        if (!marker) {
          answer.pipe(res);
          return;
        }
        cutAfter = undefined;
        passUntil(answer, res, marker);
      },
    );
    forward.on('error', () => res.destroy());
    res.on('close', () => forward.destroy());
    req.pipe(forward);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    /**
     * Drops the next event stream's connection right after the event of the log line `line`,
     * before anything that follows it (the final status, say): a connection lost at that moment.
     */
    cutAfterLine: (line: string) => {
      cutAfter = `data: ${line}\n\n`;
    },
    /** Drops every open connection from the browser (and with it the proxied streams). */
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Passes `answer` on up to the end of `marker`, then drops the client's connection. */
function passUntil(answer: IncomingMessage, res: ServerResponse, marker: string) {
  answer.setEncoding('utf8');
  let held = '';
  let cut = false;
  answer.on('data', (text: string) => {
    if (cut) return;
    held += text;
    const at = held.indexOf(marker);
    if (at < 0) {
      // What could be the start of the marker waits for the next chunk.
      const safe = Math.max(0, held.length - marker.length);
      res.write(held.slice(0, safe));
      held = held.slice(safe);
      return;
    }
    cut = true;
    answer.destroy();
    res.write(held.slice(0, at + marker.length), () => res.socket?.destroy());
  });
  answer.on('end', () => {
    if (!cut) res.end(held);
  });
}

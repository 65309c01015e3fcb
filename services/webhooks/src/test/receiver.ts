import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { startTestServer, waitFor } from '@platform/shared/testing';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

export interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Answer this long after the request arrived. */
  delayMs?: number;
}

/** How the receiver answers its n-th request (0-based); `hang` never answers. */
export type Responder = (request: ReceivedRequest, index: number) => Answer | 'hang';

/** A webhook receiver: a real HTTP server on 127.0.0.1 that records what it is sent. */
export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** TCP connections accepted, to prove a refused delivery never connected. */
  connections: number;
  /** The most requests it has had unanswered at once. */
  maxConcurrent: number;
  respond: Responder;
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(
  respond: Responder = () => ({ status: 204 }),
): Promise<Receiver> {
  const receiver = {
    requests: [] as ReceivedRequest[],
    connections: 0,
    maxConcurrent: 0,
    respond,
  } as Receiver;
  let open = 0;
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      const index = receiver.requests.push(request) - 1;
      receiver.maxConcurrent = Math.max(receiver.maxConcurrent, ++open);
      const answer = receiver.respond(request, index);
      if (answer === 'hang') return;
      setTimeout(() => {
        open--;
        res.writeHead(answer.status, answer.headers).end(answer.body ?? '');
      }, answer.delayMs ?? 0);
    });
  };
  const server = await startTestServer(handler);
  server.server.on('connection', () => receiver.connections++);
  receiver.url = server.url;
  receiver.close = () => server.close();
  receiver.waitForRequests = (count, timeoutMs = 10_000) =>
    waitFor(() => (receiver.requests.length >= count ? receiver.requests.slice(0, count) : null), {
      timeoutMs,
      what: `${count} request(s) at the receiver`,
    });
  return receiver;
}

/** Answers with each status in turn, then keeps answering the last one. */
export const answerInTurn =
  (...statuses: number[]): Responder =>
  (_request, index) => ({ status: statuses[Math.min(index, statuses.length - 1)]! });

/**
 * A local webhook receiver for tests and the bench: records every request it gets and answers as told
 * (a status code, optionally with headers, or never).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** performance.now() when the body was complete. */
  at: number;
}

export type Answer = { status: number; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  /** How to answer the next requests (default 200). */
  answer: (request: ReceivedRequest, index: number) => Answer;
  /** Resolves with the requests once `predicate` holds for them; rejects after `timeoutMs`. */
  waitFor(predicate: (received: ReceivedRequest[]) => boolean, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(options: { onRequest?: (request: ReceivedRequest) => void } = {}): Promise<Receiver> {
  const waiters = new Set<() => void>();
  const hanging = new Set<http.ServerResponse>();
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: () => ({ status: 200 }),
    waitFor: (predicate, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(receiver.received)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(receiver.received);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: condition not met within ${timeoutMs} ms (${receiver.received.length} requests)`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now() };
      const index = receiver.received.length;
      receiver.received.push(request);
      options.onRequest?.(request);
      const answer = receiver.answer(request, index);
      if (answer === 'hang') {
        hanging.add(res);
      } else {
        res.writeHead(answer.status, answer.headers).end();
      }
      for (const waiter of [...waiters]) waiter();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

/** The count of requests in flight that background jobs give way to: up while answering, down when done or dropped. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { countRequestsInFlight, requestsInFlight, requestsReceived } from './requests-in-flight.js';

const held: http.ServerResponse[] = [];
let server: http.Server;
let url: string;

beforeAll(async () => {
  server = http.createServer((_request, response) => {
    held.push(response);
  });
  countRequestsInFlight(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

it('counts a request from its arrival until its response is finished', async () => {
  const base = requestsInFlight();
  const seen = requestsReceived();
  const answers = [fetch(url), fetch(url)];
  await until(() => held.length === 2);
  expect(requestsInFlight()).toBe(base + 2);
  expect(requestsReceived()).toBe(seen + 2);
  held.shift()!.end('one');
  expect(await (await answers[0]!).text()).toBe('one');
  await until(() => requestsInFlight() === base + 1);
  held.shift()!.end('two');
  await (await answers[1]!).text();
  await until(() => requestsInFlight() === base);
  expect(requestsReceived()).toBe(seen + 2);
});

it('stops counting a request whose client went away before the answer', async () => {
  const base = requestsInFlight();
  const abort = new AbortController();
  const answer = fetch(url, { signal: abort.signal }).catch((err: unknown) => err);
  await until(() => held.length === 1);
  expect(requestsInFlight()).toBe(base + 1);
  abort.abort();
  expect(await answer).toBeInstanceOf(Error);
  await until(() => requestsInFlight() === base);
  held.shift();
});

/**
 * Where a webhook may connect, checked on the connection itself (after name resolution): plain http only to
 * loopback or private addresses even with allow_insecure_webhooks (issue 18), https to public addresses only
 * without it. Name resolution is given per request, since this machine's DNS has no public names; the
 * connections are real, to a real local receiver.
 */
import type dns from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointProblem, postWebhook, resolvedEndpointProblem, type Resolve } from './destination.js';
import { startReceiver, type Receiver } from './test-receiver.js';

const resolvesTo =
  (...addresses: string[]): Resolve =>
  () =>
    Promise.resolve(addresses.map((address): dns.LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })));

describe('webhook destinations', () => {
  let receiver: Receiver;
  let port: string;
  beforeAll(async () => {
    receiver = await startReceiver();
    port = new URL(receiver.url).port;
  });
  afterAll(async () => {
    await receiver?.close();
  });

  const post = (endpoint: string, allowInsecure: boolean, resolve?: Resolve) =>
    postWebhook({ endpoint, headers: { 'content-type': 'application/json' }, body: '{}', allowInsecure, timeoutMs: 5000, ...(resolve && { resolve }) });

  it('delivers plain http to a name that resolves to loopback, when insecure webhooks are allowed', async () => {
    const before = receiver.received.length;
    const outcome = await post(`http://receiver.internal:${port}/hook`, true, resolvesTo('127.0.0.1'));
    expect(outcome).toMatchObject({ ok: true, statusCode: 200 });
    expect(receiver.received.length).toBe(before + 1);
  });

  it('refuses plain http to a name that resolves to a public address, even with insecure webhooks allowed, without retrying', async () => {
    const before = receiver.received.length;
    const outcome = await post(`http://rebound.example:${port}/hook`, true, resolvesTo('93.184.215.14'));
    expect(outcome).toMatchObject({ ok: false, retryable: false });
    expect(outcome.errorMessage).toMatch(/^Refused: rebound\.example resolves to a public address, which plain http may not reach/);
    expect(receiver.received.length).toBe(before);
  });

  it('connects plain http only to the private addresses of a name that resolves to both', async () => {
    const before = receiver.received.length;
    const outcome = await post(`http://mixed.example:${port}/hook`, true, resolvesTo('8.8.8.8', '127.0.0.1'));
    expect(outcome).toMatchObject({ ok: true, statusCode: 200 });
    expect(receiver.received.length).toBe(before + 1);
  });

  it('refuses plain http to a public address literal before connecting', async () => {
    for (const endpoint of ['http://93.184.215.14/hook', 'http://[2606:4700::1111]/hook', 'http://169.254.169.254/latest']) {
      const outcome = await post(endpoint, true);
      expect(outcome, endpoint).toMatchObject({ ok: false, retryable: false, durationMs: 0 });
      expect(outcome.errorMessage).toMatch(/^Refused: webhook_endpoint: plain http is allowed/);
    }
  });

  it('refuses https to a name that resolves to loopback unless insecure webhooks are allowed', async () => {
    const refused = await post(`https://inside.example:${port}/hook`, false, resolvesTo('127.0.0.1'));
    expect(refused).toMatchObject({ ok: false, retryable: false });
    expect(refused.errorMessage).toMatch(/resolves to a loopback, private or link-local address/);
  });

  it('checks names at configuration time: plain http only when every address is loopback or private', async () => {
    expect(await resolvedEndpointProblem('http://svc.internal/x', true, resolvesTo('10.0.0.4'))).toBeUndefined();
    expect(await resolvedEndpointProblem('http://svc.internal/x', true, resolvesTo('10.0.0.4', '1.1.1.1'))).toMatch(/plain http/);
    expect(await resolvedEndpointProblem('http://svc.internal/x', true, () => Promise.reject(new Error('ENOTFOUND')))).toMatch(/does not resolve/);
    expect(await resolvedEndpointProblem('https://svc.example/x', true, resolvesTo('1.1.1.1'))).toBeUndefined();
    expect(await resolvedEndpointProblem('http://svc.internal/x', false, resolvesTo('10.0.0.4'))).toMatch(/allow_insecure_webhooks is on/);
    expect(endpointProblem('http://127.0.0.1:9/x', true)).toBeUndefined();
    expect(endpointProblem('http://1.1.1.1/x', true)).toMatch(/plain http/);
  });
});

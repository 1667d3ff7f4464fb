import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Management, VERSION, WebAuth, type ManagementOptions, type WebAuthOptions } from './index.js';

describe('VERSION', () => {
  it('is 10.0.0', () => {
    expect(VERSION).toBe('10.0.0');
  });

  it('matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(pkg.version).toBe(VERSION);
  });
});

describe('WebAuth', () => {
  const valid: WebAuthOptions = { domain: 'example.com', clientID: 'abc123' };

  it('requires an options object', () => {
    expect(() => new WebAuth(undefined as unknown as WebAuthOptions)).toThrow('options object is required');
    expect(() => new WebAuth(null as unknown as WebAuthOptions)).toThrow('options object is required');
    expect(() => new WebAuth('example.com' as unknown as WebAuthOptions)).toThrow('options object is required');
  });

  it('requires domain', () => {
    expect(() => new WebAuth({ clientID: 'abc123' } as WebAuthOptions)).toThrow(new Error('domain option is required'));
    expect(() => new WebAuth({ ...valid, domain: '' })).toThrow('domain option is required');
    expect(() => new WebAuth({ ...valid, domain: '   ' })).toThrow('domain option is required');
    expect(() => new WebAuth({ ...valid, domain: 42 as unknown as string })).toThrow('domain option must be a string');
  });

  it('requires clientID', () => {
    expect(() => new WebAuth({ domain: 'example.com' } as WebAuthOptions)).toThrow(new Error('clientID option is required'));
    expect(() => new WebAuth({ ...valid, clientID: '' })).toThrow('clientID option is required');
    expect(() => new WebAuth({ ...valid, clientID: 7 as unknown as string })).toThrow('clientID option must be a string');
  });

  it('stores a frozen copy of its options', () => {
    const options = { ...valid };
    const webAuth = new WebAuth(options);
    expect(webAuth.baseOptions).toEqual(valid);
    expect(webAuth.baseOptions).not.toBe(options);
    expect(Object.isFrozen(webAuth.baseOptions)).toBe(true);
  });
});

describe('Management', () => {
  const valid: ManagementOptions = { domain: 'example.com', token: 'ey.token' };

  it('requires an options object', () => {
    expect(() => new Management(undefined as unknown as ManagementOptions)).toThrow('options object is required');
  });

  it('requires domain', () => {
    expect(() => new Management({ token: 'ey.token' } as ManagementOptions)).toThrow(new Error('domain option is required'));
  });

  it('requires token', () => {
    expect(() => new Management({ domain: 'example.com' } as ManagementOptions)).toThrow(new Error('token option is required'));
    expect(() => new Management({ ...valid, token: '' })).toThrow('token option is required');
  });

  it('stores its options and base URL', () => {
    const management = new Management({ domain: 'http://localhost:3000/', token: 'ey.token' });
    expect(management.baseUrl).toBe('http://localhost:3000');
    expect(management.baseOptions).toEqual({ domain: 'http://localhost:3000/', token: 'ey.token' });
  });
});

describe('domain normalisation', () => {
  const baseUrl = (domain: string) => new WebAuth({ domain, clientID: 'abc123' }).baseUrl;

  it.each([
    ['example.com', 'https://example.com'],
    ['example.com/', 'https://example.com'],
    ['  example.com  ', 'https://example.com'],
    ['Login.Example.COM', 'https://login.example.com'],
    ['localhost:3000', 'https://localhost:3000'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['http://localhost:3000/', 'http://localhost:3000'],
    ['https://example.com:443/', 'https://example.com'],
    ['HTTPS://example.com', 'https://example.com'],
    ['https://example.com/auth/', 'https://example.com/auth'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
  ])('%j → %s', (domain, expected) => {
    expect(baseUrl(domain)).toBe(expected);
  });

  it('rejects schemes other than http and https', () => {
    expect(() => baseUrl('ftp://example.com')).toThrow('domain option must use http or https, not ftp');
    expect(() => baseUrl('javascript://example.com')).toThrow('domain option must use http or https');
  });

  it('rejects values that are not a host or a plain URL', () => {
    expect(() => baseUrl('exa mple.com')).toThrow('domain option is not a valid host name or URL');
    expect(() => baseUrl('https://')).toThrow('domain option is not a valid host name or URL');
    expect(() => baseUrl('https://user:pw@example.com')).toThrow('domain option must be a host name or a plain http(s) URL');
    expect(() => baseUrl('example.com?tenant=a')).toThrow('domain option must be a host name or a plain http(s) URL');
    expect(() => baseUrl('example.com#x')).toThrow('domain option must be a host name or a plain http(s) URL');
  });
});

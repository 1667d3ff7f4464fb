import { describe, expect, it } from 'vitest';
import { IpAllowlist, isAllowlistEntry, normalizeIp } from './ip-allowlist.js';

describe('IP allowlists', () => {
  it('matches single addresses and CIDR ranges of both families', () => {
    const list = new IpAllowlist(['10.0.0.0/8', '192.168.1.7', '2001:db8::/32', '::1']);
    expect(list.has('10.200.3.4')).toBe(true);
    expect(list.has('11.0.0.1')).toBe(false);
    expect(list.has('192.168.1.7')).toBe(true);
    expect(list.has('192.168.1.8')).toBe(false);
    expect(list.has('2001:db8:1::5')).toBe(true);
    expect(list.has('2001:db9::5')).toBe(false);
    expect(list.has('::1')).toBe(true);
  });

  it('treats an IPv4-mapped IPv6 address as the IPv4 address', () => {
    expect(normalizeIp('::ffff:127.0.0.2')).toBe('127.0.0.2');
    expect(new IpAllowlist(['127.0.0.0/24']).has('::ffff:127.0.0.9')).toBe(true);
  });

  it('never matches an unknown or malformed client address, and an empty list matches nothing', () => {
    expect(new IpAllowlist(['0.0.0.0/0']).has(null)).toBe(false);
    expect(new IpAllowlist(['0.0.0.0/0']).has('not-an-ip')).toBe(false);
    expect(new IpAllowlist([]).has('127.0.0.1')).toBe(false);
  });

  it('accepts only addresses and ranges with a valid prefix', () => {
    for (const good of ['1.2.3.4', '1.2.3.0/24', '0.0.0.0/0', '::', 'fe80::/10', '2001:db8::1/128']) expect(isAllowlistEntry(good)).toBe(true);
    for (const bad of ['', 'x', '1.2.3', '1.2.3.4/33', '::/129', '1.2.3.4/', '1.2.3.4/8/8', '1.2.3.4/-1', '300.1.1.1', 'example.com']) {
      expect(isAllowlistEntry(bad)).toBe(false);
    }
  });
});

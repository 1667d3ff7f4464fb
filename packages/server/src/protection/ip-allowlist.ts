/** IP allowlists of attack protection: single addresses and CIDR ranges, IPv4 or IPv6, matched with node's BlockList. */
import { BlockList, isIP } from 'node:net';

/** An IPv4 address seen through a dual-stack socket (`::ffff:1.2.3.4`) is the IPv4 address. */
export function normalizeIp(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  return mapped ? mapped[1]! : ip;
}

function parseEntry(entry: string): { address: string; prefix: number | undefined; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', prefixText, ...rest] = entry.trim().split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (prefixText === undefined) return { address, prefix: undefined, family };
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  return prefix <= (version === 4 ? 32 : 128) ? { address, prefix, family } : undefined;
}

/** Whether `entry` is an IP address or CIDR range an allowlist accepts. */
export function isAllowlistEntry(entry: string): boolean {
  return parseEntry(entry) !== undefined;
}

export class IpAllowlist {
  readonly #list = new BlockList();
  readonly #empty: boolean;

  /** Entries that do not parse are ignored (the Management API refuses them before they are stored). */
  constructor(entries: readonly string[]) {
    let count = 0;
    for (const entry of entries) {
      const parsed = parseEntry(entry);
      if (!parsed) continue;
      if (parsed.prefix === undefined) this.#list.addAddress(parsed.address, parsed.family);
      else this.#list.addSubnet(parsed.address, parsed.prefix, parsed.family);
      count++;
    }
    this.#empty = count === 0;
  }

  has(ip: string | null): boolean {
    if (this.#empty || !ip) return false;
    const address = normalizeIp(ip);
    const version = isIP(address);
    if (version === 0) return false;
    return this.#list.check(address, version === 4 ? 'ipv4' : 'ipv6');
  }
}

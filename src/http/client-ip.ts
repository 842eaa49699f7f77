import ipaddr from 'ipaddr.js';
import { ConfigError } from '../errors.js';

/** Default IPv6 prefix of IP keys: one subscriber site. Accepted: /32 (an ISP allocation) to /64 (one LAN), or 128 (the full address). */
export const DEFAULT_IPV6_PREFIX = 56;

/** Throws {@link ConfigError} unless `prefix` is an integer in 32..64 or exactly 128. */
export function checkIpv6Prefix(prefix: unknown): number {
  if (typeof prefix === 'number' && Number.isInteger(prefix) && ((prefix >= 32 && prefix <= 64) || prefix === 128)) {
    return prefix;
  }
  throw new ConfigError(`ipv6Prefix must be an integer in 32..64 or 128, got ${String(prefix)}`);
}

/**
 * Parses one address as it appears on a socket or in a forwarding header, or returns
 * `undefined` when it is not an IP address.
 *
 * Accepted decorations: `[v6]`, `[v6]:port`, `v4:port`, a zone id (`fe80::1%eth0`, dropped).
 * IPv4 must be four-part decimal (`127.1` or `0x7f.0.0.1` are rejected: no proxy writes them).
 * An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is the IPv4 address it carries.
 */
export function parseAddress(raw: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  let text = raw.trim();
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close === -1) return undefined;
    text = text.slice(1, close);
  } else if (text.indexOf(':') !== -1 && text.indexOf(':') === text.lastIndexOf(':') && text.includes('.')) {
    text = text.slice(0, text.indexOf(':')); // v4:port (an IPv6 address has at least two colons)
  }
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (!ipaddr.IPv6.isValid(text)) return undefined;
  const v6 = ipaddr.IPv6.parse(text);
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
}

/** The canonical text of an address: dotted quad, or RFC 5952 compressed IPv6. */
export function formatAddress(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  return address.kind() === 'ipv6' ? (address as ipaddr.IPv6).toRFC5952String() : address.toString();
}

const CANONICAL_IPV4 = /^(?:0|[1-9]\d{0,2})(?:\.(?:0|[1-9]\d{0,2})){3}$/;

/**
 * The IP key of a socket address that is a canonical dotted quad (`203.0.113.7`, or its
 * IPv4-mapped form `::ffff:203.0.113.7`, as a dual-stack socket reports it), without parsing
 * through ipaddr.js; `undefined` for anything else, which `parseAddress` then decides. Where
 * it answers, it answers as `ipKey` does: only forms whose canonical text is the input itself.
 */
export function canonicalIpv4Key(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const text = raw.startsWith('::ffff:') ? raw.slice(7) : raw;
  if (text.length > 15 || !CANONICAL_IPV4.test(text)) return undefined;
  let octet = 0;
  for (let index = 0; index <= text.length; index++) {
    const code = index === text.length ? 0x2e : text.charCodeAt(index);
    if (code !== 0x2e) octet = octet * 10 + code - 0x30;
    else if (octet > 255) return undefined;
    else octet = 0;
  }
  return text;
}

/**
 * The rate-limit key of a client address: IPv4 in full; IPv6 masked to `ipv6Prefix` bits and
 * written as `network/prefix` (e.g. `2001:db8:abcd:1200::/56`), or in full when the prefix is 128.
 *
 * Why mask: one IPv6 subscriber usually holds a /56 or a /64, so keying on the full address lets
 * one client present 2^64 distinct keys.
 */
export function addressKey(address: ipaddr.IPv4 | ipaddr.IPv6, ipv6Prefix: number): string {
  if (address.kind() === 'ipv4' || ipv6Prefix === 128) return formatAddress(address);
  const bytes = address.toByteArray();
  for (let index = 0; index < 16; index++) {
    const keptBits = Math.max(0, Math.min(8, ipv6Prefix - index * 8));
    bytes[index] = (bytes[index] as number) & ((0xff << (8 - keptBits)) & 0xff);
  }
  return `${(ipaddr.fromByteArray(bytes) as ipaddr.IPv6).toRFC5952String()}/${ipv6Prefix}`;
}

/**
 * The IP key of an address string (`ipKey('2001:db8::1')` → `2001:db8::/56`), or `undefined`
 * when it is not an IP address. For key functions that fall back to the IP by hand.
 * @throws {ConfigError} on an invalid prefix.
 * @example
 * ```ts
 * import { ipKey } from 'sluice/http';
 *
 * ipKey('2001:db8:abcd:1234::1'); // '2001:db8:abcd:1200::/56'
 * ipKey('203.0.113.7'); // '203.0.113.7'
 * ipKey('::ffff:203.0.113.7'); // '203.0.113.7'
 * ipKey('unknown'); // undefined
 * ```
 */
export function ipKey(address: string, ipv6Prefix: number = DEFAULT_IPV6_PREFIX): string | undefined {
  const parsed = parseAddress(address);
  return parsed === undefined ? undefined : addressKey(parsed, checkIpv6Prefix(ipv6Prefix));
}

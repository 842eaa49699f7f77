import type ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';
import { ConfigError } from '../errors.js';
import { addressKey, canonicalIpv4Key, formatAddress, parseAddress } from './client-ip.js';

/**
 * Which proxies may report the client address, with Express's `trust proxy` semantics:
 * `false` (default) none; `true` all (the leftmost entry wins: spoofable, warned about);
 * a number n: the first n hops from this server; a string or list of addresses, CIDRs or the
 * names `loopback`, `linklocal`, `uniquelocal` (comma-separated in a string); or a function
 * `(address, hop) => boolean` where hop 0 is the socket peer.
 */
export type TrustProxy = boolean | number | string | readonly string[] | ((address: string, hop: number) => boolean);

/** The header a trusted proxy writes the chain into. Only this one is read; the other is ignored. */
export type ProxyHeader = 'x-forwarded-for' | 'forwarded';

/** A compiled trust predicate, or `undefined` when no proxy is trusted. */
export type TrustFunction = (address: string, hop: number) => boolean;

/**
 * Compiles a {@link TrustProxy} value (via proxy-addr's `compile` for address lists).
 * @throws {ConfigError} on an invalid address, CIDR or hop count.
 */
export function compileTrust(trust: TrustProxy | undefined): TrustFunction | undefined {
  if (trust === undefined || trust === false) return undefined;
  if (trust === true) return () => true;
  if (typeof trust === 'function') return trust;
  if (typeof trust === 'number') {
    if (!Number.isInteger(trust) || trust < 0) {
      throw new ConfigError(`trustProxy hop count must be a non-negative integer, got ${trust}`);
    }
    return trust === 0 ? undefined : (_address, hop) => hop < trust;
  }
  if (typeof trust !== 'string' && !Array.isArray(trust)) {
    throw new ConfigError(`trustProxy must be a boolean, hop count, function, string or array, got ${typeof trust}`);
  }
  const list = typeof trust === 'string' ? trust.split(',').map((entry) => entry.trim()) : [...trust];
  try {
    return remembered(proxyaddr.compile(list));
  } catch (error) {
    throw new ConfigError(`trustProxy: ${(error as Error).message}`);
  }
}

/** Most trust answers of an address list kept at once; the table starts over when full. */
const TRUST_ANSWERS = 1024;

/**
 * proxy-addr's compiled list parses the address on every call (the socket peer of every
 * request, at least); its answer depends on the address alone, so recent answers are kept.
 * Bounded: addresses deeper in the chain are the client's choice.
 */
function remembered(trust: TrustFunction): TrustFunction {
  const answers = new Map<string, boolean>();
  return (address, hop) => {
    let answer = answers.get(address);
    if (answer === undefined) {
      answer = trust(address, hop);
      if (answers.size >= TRUST_ANSWERS) answers.clear();
      answers.set(address, answer);
    }
    return answer;
  };
}

/** True when `trust` vouches for arbitrary public addresses far down the chain: every hop is trusted. */
export function trustsEverything(trust: TrustFunction): boolean {
  return trust('198.51.100.77', 99) && trust('2001:db8::77', 99);
}

/**
 * Splits a forwarding header into its hop entries, nearest hop last (the order proxies append).
 * `Forwarded` (RFC 7239) yields each element's `for=` value, unquoted; an element without
 * one yields `''`, which is not an address and so ends the walk.
 */
export function forwardedHops(header: ProxyHeader, value: string): string[] {
  if (header === 'x-forwarded-for') return value.split(',');
  return splitOutsideQuotes(value, ',').map((element) => {
    for (const pair of splitOutsideQuotes(element, ';')) {
      const equals = pair.indexOf('=');
      if (equals !== -1 && pair.slice(0, equals).trim().toLowerCase() === 'for') {
        return unquote(pair.slice(equals + 1).trim());
      }
    }
    return '';
  });
}

/**
 * The client address: the socket peer, or, walking the forwarding chain from the nearest hop
 * outwards, the first address not trusted. Never the leftmost entry unless every hop before it
 * is trusted. An entry that is not an IP address (garbage, `unknown`, an obfuscated `_id`)
 * ends the walk at the trusted hop that reported it, so a client cannot mint keys with it.
 * Returns `undefined` only when the socket address itself is missing or unreadable.
 */
export function resolveClientAddress(
  socketAddress: string | undefined,
  hops: readonly string[],
  trust: TrustFunction | undefined,
): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  let client = socketAddress === undefined ? undefined : parseAddress(socketAddress);
  if (client === undefined || trust === undefined) return client;
  for (let hop = 0, index = hops.length - 1; index >= 0; hop++, index--) {
    if (!trust(formatAddress(client), hop)) return client;
    const next = parseAddress(hops[index] as string);
    if (next === undefined) return client;
    client = next;
  }
  return client;
}

/**
 * The key of the client `resolveClientAddress` finds (see `addressKey`), by the same walk:
 * addresses that are canonical dotted quads (most, behind a proxy) are compared and returned as
 * text, without parsing through ipaddr.js. `undefined` when the socket address is unreadable.
 */
export function resolveClientKey(
  socketAddress: string | undefined,
  hops: readonly string[],
  trust: TrustFunction | undefined,
  ipv6Prefix: number,
): string | undefined {
  let client = readAddress(socketAddress);
  if (client === undefined) return undefined;
  if (trust !== undefined) {
    for (let hop = 0, index = hops.length - 1; index >= 0; hop++, index--) {
      if (!trust(typeof client === 'string' ? client : formatAddress(client), hop)) break;
      const next = readAddress(hops[index] as string);
      if (next === undefined) break;
      client = next;
    }
  }
  return typeof client === 'string' ? client : addressKey(client, ipv6Prefix);
}

/** An address as `parseAddress` reads it: a canonical dotted quad stays text. */
function readAddress(raw: string | undefined): string | ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (raw === undefined) return undefined;
  return canonicalIpv4Key(raw.trim()) ?? parseAddress(raw);
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '\\' && quoted) index++;
    else if (char === '"') quoted = !quoted;
    else if (char === separator && !quoted) {
      parts.push(text.slice(start, index));
      start = index + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function unquote(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  return value.slice(1, -1).replace(/\\(.)/g, '$1');
}

import { addressKey, formatAddress } from './client-ip.js';
import type { HttpConfig } from './config.js';
import type { RequestFacts, RequestInfo } from './options.js';
import { forwardedHops, resolveClientAddress, resolveClientKey, trustsEverything } from './proxy.js';
import type { HttpWarningCode } from './warnings.js';

/**
 * Returns `describe(facts)`, which adds the client address to the request facts. The address
 * is resolved lazily, once per request: identity-keyed limits never pay for the proxy walk.
 */
export function createDescriber<Req>(
  config: HttpConfig<Req>,
  warn: (code: HttpWarningCode, message: string) => void,
): (facts: RequestFacts<Req>) => RequestInfo<Req> {
  const resolve = createResolver(config, warn);
  const { ipv6Prefix } = config;
  return (facts) => {
    let resolved: { address: ReturnType<typeof resolve> } | undefined;
    const address = () => {
      resolved ??= { address: resolve(facts) };
      return resolved.address;
    };
    return {
      ...facts,
      routeId: facts.routeId ?? facts.path,
      get ip() {
        const client = address();
        return client === undefined ? undefined : formatAddress(client);
      },
      get ipKey() {
        return keyOf(address(), ipv6Prefix, warn);
      },
    };
  };
}

/**
 * Returns `ipKeyOf(facts)`: the `ipKey` a described request would have, with the same
 * warnings, for the synchronous path. Canonical dotted quads on the socket and in the
 * forwarding chain are keys as they stand (no ipaddr.js parse).
 */
export function createIpKeyer<Req>(
  config: HttpConfig<Req>,
  warn: (code: HttpWarningCode, message: string) => void,
): (facts: RequestFacts<Req>) => string {
  const hopsOf = createHopReader(config, warn);
  const { trust, ipv6Prefix } = config;
  return (facts) => resolveClientKey(facts.remoteAddress, hopsOf(facts), trust, ipv6Prefix) ?? unknownClient(warn);
}

function keyOf(
  client: ReturnType<typeof resolveClientAddress>,
  ipv6Prefix: number,
  warn: (code: HttpWarningCode, message: string) => void,
): string {
  return client === undefined ? unknownClient(warn) : addressKey(client, ipv6Prefix);
}

function unknownClient(warn: (code: HttpWarningCode, message: string) => void): string {
  warn('SLUICE_HTTP_NO_CLIENT_ADDRESS', 'A request has no readable client address; it is keyed as "unknown".');
  return 'unknown';
}

function warnIfForwarded<Req>(facts: RequestFacts<Req>, warn: (code: HttpWarningCode, message: string) => void) {
  if (facts.header('x-forwarded-for') !== undefined || facts.header('forwarded') !== undefined) {
    warn(
      'SLUICE_HTTP_FORWARDED_UNTRUSTED',
      'A request carries X-Forwarded-For or Forwarded but trustProxy is not set: clients are keyed by the socket address (the proxy, if there is one). Set trustProxy to your proxies.',
    );
  }
}

const NO_HOPS: readonly string[] = [];

/**
 * The forwarding chain a request's client is read from: none unless trustProxy is set (then
 * warning about a forwarding header that is ignored), else the proxy header's hops.
 */
function createHopReader<Req>(
  config: HttpConfig<Req>,
  warn: (code: HttpWarningCode, message: string) => void,
): (facts: RequestFacts<Req>) => readonly string[] {
  const { trust, proxyHeader } = config;
  const trustAll = trust !== undefined && trustsEverything(trust);
  return (facts) => {
    if (trust === undefined) {
      warnIfForwarded(facts, warn);
      return NO_HOPS;
    }
    if (trustAll) {
      warn(
        'SLUICE_HTTP_TRUST_ALL',
        'trustProxy trusts every hop, so the leftmost forwarded address is the key and any client can forge it. Trust your proxies by address or hop count.',
      );
    }
    const value = facts.header(proxyHeader);
    return value === undefined ? NO_HOPS : forwardedHops(proxyHeader, value);
  };
}

/** The client address of a request: the socket's, or the proxy walk's when trustProxy is set. */
function createResolver<Req>(
  config: HttpConfig<Req>,
  warn: (code: HttpWarningCode, message: string) => void,
): (facts: RequestFacts<Req>) => ReturnType<typeof resolveClientAddress> {
  const hopsOf = createHopReader(config, warn);
  const { trust } = config;
  return (facts) => resolveClientAddress(facts.remoteAddress, hopsOf(facts), trust);
}

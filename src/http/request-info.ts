import { addressKey, formatAddress } from './client-ip.js';
import type { HttpConfig } from './config.js';
import type { RequestFacts, RequestInfo } from './options.js';
import { forwardedHops, resolveClientAddress, trustsEverything } from './proxy.js';
import type { HttpWarningCode } from './warnings.js';

/**
 * Returns `describe(facts)`, which adds the client address to the request facts. The address
 * is resolved lazily, once per request: identity-keyed limits never pay for the proxy walk.
 */
export function createDescriber<Req>(
  config: HttpConfig<Req>,
  warn: (code: HttpWarningCode, message: string) => void,
): (facts: RequestFacts<Req>) => RequestInfo<Req> {
  const { trust, proxyHeader, ipv6Prefix } = config;
  const trustAll = trust !== undefined && trustsEverything(trust);

  const resolve = (facts: RequestFacts<Req>) => {
    if (trust === undefined) {
      if (facts.header('x-forwarded-for') !== undefined || facts.header('forwarded') !== undefined) {
        warn(
          'SLUICE_HTTP_FORWARDED_UNTRUSTED',
          'A request carries X-Forwarded-For or Forwarded but trustProxy is not set: clients are keyed by the socket address (the proxy, if there is one). Set trustProxy to your proxies.',
        );
      }
      return resolveClientAddress(facts.remoteAddress, [], undefined);
    }
    if (trustAll) {
      warn(
        'SLUICE_HTTP_TRUST_ALL',
        'trustProxy trusts every hop, so the leftmost forwarded address is the key and any client can forge it. Trust your proxies by address or hop count.',
      );
    }
    const value = facts.header(proxyHeader);
    return resolveClientAddress(
      facts.remoteAddress,
      value === undefined ? [] : forwardedHops(proxyHeader, value),
      trust,
    );
  };

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
        const client = address();
        if (client !== undefined) return addressKey(client, ipv6Prefix);
        warn('SLUICE_HTTP_NO_CLIENT_ADDRESS', 'A request has no readable client address; it is keyed as "unknown".');
        return 'unknown';
      },
    };
  };
}

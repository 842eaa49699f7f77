import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { addressKey, formatAddress } from '../../src/http/client-ip.js';
import {
  compileTrust,
  forwardedHops,
  resolveClientAddress,
  resolveClientKey,
  trustsEverything,
} from '../../src/http/proxy.js';

const resolve = (socket: string | undefined, xff: string | undefined, trust: Parameters<typeof compileTrust>[0]) => {
  const address = resolveClientAddress(
    socket,
    xff === undefined ? [] : forwardedHops('x-forwarded-for', xff),
    compileTrust(trust),
  );
  return address && formatAddress(address);
};

describe('resolveClientAddress (X-Forwarded-For)', () => {
  it('issue 6: proxy 10.0.0.1 trusted, the client is the rightmost untrusted hop, whatever the leftmost says', () => {
    for (const xff of ['198.51.100.7, 203.0.113.5', '198.51.100.8, 203.0.113.5', '198.51.100.9, 203.0.113.5']) {
      expect(resolve('10.0.0.1', xff, '10.0.0.1')).toBe('203.0.113.5');
    }
  });

  it('without trust the socket address is the client and the header is ignored', () => {
    expect(resolve('10.0.0.1', '198.51.100.7, 203.0.113.5', false)).toBe('10.0.0.1');
    expect(resolve('10.0.0.1', '198.51.100.7, 203.0.113.5', undefined)).toBe('10.0.0.1');
    expect(resolve('10.0.0.1', '198.51.100.7', 0)).toBe('10.0.0.1');
  });

  it('an untrusted socket peer cannot speak for anyone', () => {
    expect(resolve('192.0.2.99', '203.0.113.5', '10.0.0.1')).toBe('192.0.2.99');
  });

  it('walks past several trusted hops, by CIDR and by hop count', () => {
    const xff = '1.1.1.1, 203.0.113.5, 10.0.0.2';
    expect(resolve('10.0.0.1', xff, '10.0.0.0/8')).toBe('203.0.113.5');
    expect(resolve('10.0.0.1', xff, ['10.0.0.1', '10.0.0.2'])).toBe('203.0.113.5');
    expect(resolve('10.0.0.1', xff, 'loopback, 10.0.0.0/8')).toBe('203.0.113.5');
    expect(resolve('10.0.0.1', xff, 1)).toBe('10.0.0.2');
    expect(resolve('10.0.0.1', xff, 2)).toBe('203.0.113.5');
    expect(resolve('10.0.0.1', xff, (address) => address.startsWith('10.'))).toBe('203.0.113.5');
  });

  it('trusting everything yields the leftmost (spoofable) entry, and is detected', () => {
    expect(resolve('10.0.0.1', '198.51.100.7, 203.0.113.5', true)).toBe('198.51.100.7');
    expect(trustsEverything(compileTrust(true)!)).toBe(true);
    expect(trustsEverything(compileTrust('0.0.0.0/1, 128.0.0.0/1, ::/1, 8000::/1')!)).toBe(true);
    expect(trustsEverything(compileTrust(() => true)!)).toBe(true);
    expect(trustsEverything(compileTrust('10.0.0.1')!)).toBe(false);
    expect(trustsEverything(compileTrust(2)!)).toBe(false);
  });

  it('an entry that is not an address ends the walk at the trusted hop that reported it', () => {
    expect(resolve('10.0.0.1', '203.0.113.5, garbage', '10.0.0.1')).toBe('10.0.0.1');
    expect(resolve('10.0.0.1', '', '10.0.0.1')).toBe('10.0.0.1');
    expect(resolve('10.0.0.1', 'garbage, 203.0.113.5', '10.0.0.1')).toBe('203.0.113.5');
  });

  it('normalises IPv4-mapped sockets and hops, ports and brackets', () => {
    expect(resolve('::ffff:10.0.0.1', '[2001:db8::7]:4711', '10.0.0.1')).toBe('2001:db8::7');
    expect(resolve('::ffff:10.0.0.1', '203.0.113.5:1234', '10.0.0.1')).toBe('203.0.113.5');
    expect(resolve('::ffff:10.0.0.1', '::ffff:203.0.113.5', '10.0.0.1')).toBe('203.0.113.5');
  });

  it('an unreadable socket address yields undefined', () => {
    expect(resolve(undefined, '203.0.113.5', '10.0.0.1')).toBeUndefined();
    expect(resolve('nonsense', '203.0.113.5', true)).toBeUndefined();
  });
});

describe('forwardedHops (RFC 7239 Forwarded)', () => {
  it('extracts for= from each element, quoted or not, case-insensitively', () => {
    expect(
      forwardedHops('forwarded', 'for=192.0.2.60;proto=http;by=203.0.113.43, For="[2001:db8:cafe::17]:4711"'),
    ).toEqual(['192.0.2.60', '[2001:db8:cafe::17]:4711']);
  });

  it('keeps commas and semicolons inside quotes, unescapes, and marks elements without for=', () => {
    expect(forwardedHops('forwarded', 'for="a,b;c", proto=https, for="\\"x\\""')).toEqual(['a,b;c', '', '"x"']);
  });

  it('walks Forwarded right to left like X-Forwarded-For', () => {
    const hops = forwardedHops('forwarded', 'for=198.51.100.7, for=203.0.113.5;proto=https');
    expect(formatAddress(resolveClientAddress('10.0.0.1', hops, compileTrust('10.0.0.1'))!)).toBe('203.0.113.5');
    const obfuscated = forwardedHops('forwarded', 'for=203.0.113.5, for=_gazonk');
    expect(formatAddress(resolveClientAddress('10.0.0.1', obfuscated, compileTrust('10.0.0.1'))!)).toBe('10.0.0.1');
  });
});

describe('compileTrust', () => {
  it.each([['999.1.1.1'], ['10.0.0.0/33'], [-1], [1.5], [['10.0.0.1', 'nope']]])(
    'rejects %j with ConfigError',
    (trust) => {
      expect(() => compileTrust(trust as never)).toThrow(ConfigError);
    },
  );
});

describe('resolveClientKey: the walk with dotted quads kept as text', () => {
  const entry = fc.oneof(
    fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((octets) => octets.join('.')),
    fc.constantFrom('10.0.0.1', '10.1.2.3', '127.0.0.1', '::ffff:10.0.0.1', '::1', '2001:db8::7', '[2001:db8::8]:443'),
    fc.constantFrom('10.0.0.1:8080', '010.0.0.1', ' 10.0.0.2 ', '10.0.0.256', 'unknown', '_hidden', '', '0x7f.0.0.1'),
  );
  const trusts = ['10.0.0.0/8', 'loopback, 10.0.0.1', 2, true, ['::1', '10.0.0.1']] as const;

  it('answers addressKey of the client resolveClientAddress finds, for any chain', () => {
    fc.assert(
      fc.property(
        fc.option(entry, { nil: undefined }),
        fc.array(entry, { maxLength: 5 }),
        fc.constantFrom(...trusts),
        fc.constantFrom(48, 56, 64, 128),
        (socket, hops, trust, prefix) => {
          const compiled = compileTrust(trust);
          const client = resolveClientAddress(socket, hops, compiled);
          const expected = client === undefined ? undefined : addressKey(client, prefix);
          expect(resolveClientKey(socket, hops, compiled, prefix)).toBe(expected);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('calls a trust function once per hop walked, as resolveClientAddress does', () => {
    const calls: [string, number][] = [];
    const trust = (address: string, hop: number) => {
      calls.push([address, hop]);
      return hop < 3;
    };
    expect(
      resolveClientKey('10.0.0.1', forwardedHops('x-forwarded-for', '2001:db8::9, 203.0.113.5, 10.0.0.2'), trust, 56),
    ).toBe('2001:db8::/56');
    expect(calls).toEqual([
      ['10.0.0.1', 0],
      ['10.0.0.2', 1],
      ['203.0.113.5', 2],
    ]);
  });
});

describe('compileTrust: an address list remembers its answers, boundedly', () => {
  it('answers as proxy-addr does, past more distinct addresses than it keeps', () => {
    const trust = compileTrust('10.0.0.0/8, ::1') as (address: string, hop: number) => boolean;
    for (let i = 0; i < 5000; i++) {
      const inside = `10.${i >> 8}.${i & 255}.1`;
      const outside = `11.${i >> 8}.${i & 255}.1`;
      expect([trust(inside, 0), trust(outside, 0), trust(inside, 3)]).toEqual([true, false, true]);
    }
    expect(trust('::1', 0)).toBe(true);
  });
});

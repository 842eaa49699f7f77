import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { addressKey, checkIpv6Prefix, formatAddress, parseAddress } from '../../src/http/client-ip.js';
import { ipKey } from '../../src/http/index.js';

describe('parseAddress', () => {
  it.each([
    ['203.0.113.5', '203.0.113.5'],
    [' 203.0.113.5 ', '203.0.113.5'],
    ['203.0.113.5:8080', '203.0.113.5'],
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['::ffff:a00:1', '10.0.0.1'],
    ['[::ffff:10.0.0.1]:443', '10.0.0.1'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['[2001:db8::1]:4711', '2001:db8::1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['[fe80::1%25eth0]:80', 'fe80::1'],
    ['::1', '::1'],
  ])('%s → %s', (raw, expected) => {
    const address = parseAddress(raw);
    expect(address && formatAddress(address)).toBe(expected);
  });

  it.each([
    '',
    'garbage',
    'unknown',
    '_hidden',
    '1',
    '127.1',
    '0x7f.0.0.1',
    '1.2.3.4.5',
    '256.1.1.1',
    '[::1',
    '2001:db8::1::2',
    '1.2.3.4:80:90',
  ])('rejects %j', (raw) => {
    expect(parseAddress(raw)).toBeUndefined();
  });
});

describe('addressKey', () => {
  const key = (raw: string, prefix: number) => addressKey(parseAddress(raw)!, prefix);

  it('keeps IPv4 whole, whatever the IPv6 prefix', () => {
    expect(key('203.0.113.5', 56)).toBe('203.0.113.5');
    expect(key('::ffff:203.0.113.5', 32)).toBe('203.0.113.5');
  });

  it('masks IPv6 to /56 by default shape: same /64 and same /56 share a key, another /56 does not', () => {
    const first = key('2001:db8:abcd:1200::1', 56);
    expect(first).toBe('2001:db8:abcd:1200::/56');
    expect(key('2001:db8:abcd:1200:ffff:ffff:ffff:ffff', 56)).toBe(first);
    expect(key('2001:db8:abcd:12ff::1', 56)).toBe(first);
    expect(key('2001:db8:abcd:1300::1', 56)).toBe('2001:db8:abcd:1300::/56');
  });

  it('honours /32, /33, /64 and 128', () => {
    expect(key('2001:db8:abcd:1234:5678::1', 32)).toBe('2001:db8::/32');
    expect(key('2001:db8:ffff:1234::1', 33)).toBe('2001:db8:8000::/33');
    expect(key('2001:db8:abcd:1234:5678::1', 64)).toBe('2001:db8:abcd:1234::/64');
    expect(key('2001:db8:abcd:1234:5678::1', 128)).toBe('2001:db8:abcd:1234:5678::1');
  });

  it('ipKey parses and masks in one call', () => {
    expect(ipKey('[2001:db8:abcd:1234::9]:80')).toBe('2001:db8:abcd:1200::/56');
    expect(ipKey('not an ip')).toBeUndefined();
  });
});

describe('checkIpv6Prefix', () => {
  it.each([32, 48, 56, 64, 128])('accepts %d', (prefix) => {
    expect(checkIpv6Prefix(prefix)).toBe(prefix);
  });
  it.each([31, 65, 127, 129, 0, 56.5, Number.NaN, '56', undefined])('rejects %j with ConfigError', (prefix) => {
    expect(() => checkIpv6Prefix(prefix)).toThrow(ConfigError);
  });
});

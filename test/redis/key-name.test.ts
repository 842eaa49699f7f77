import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redisHolds } from '../../src/concurrency/index.js';
import { ConfigError, gcra, InvalidKeyError } from '../../src/index.js';
import { createRedisPauseStore } from '../../src/outbound/index.js';
import { createHeartbeat, createRedisLimiter, keySlot } from '../../src/stores/redis/index.js';
import { checkPrefix, redisKeyName } from '../../src/stores/redis/key-name.js';
import { BLOCK_SUFFIX } from '../../src/stores/redis/scripts/block-key.js';
import { useRedisServer } from '../support/redis-server.js';

const { redis } = useRedisServer({ connections: 2 });
const admin = () => redis(1);
let prefixes = 0;

/** Strings rich in the characters the hash tag rule and the escape care about. */
const tricky = fc.string({ unit: fc.constantFrom('{', '}', '%', '2', '5', '7', 'D', 'd', 'x', ':'), maxLength: 12 });
const anyKey = fc.oneof(tricky, fc.string({ unit: 'grapheme', maxLength: 24 }));
const anyPrefix = fc.string({ maxLength: 12 }).filter((prefix) => !/[{}]/.test(prefix));

describe('redisKeyName', () => {
  it('puts a key and its :block companion in one Cluster slot, whatever the key holds', () => {
    fc.assert(
      fc.property(anyPrefix, anyKey, (prefix, key) => {
        const name = redisKeyName(prefix, key);
        expect(keySlot(`${name}${BLOCK_SUFFIX}`)).toBe(keySlot(name));
        expect(name.charAt(prefix.length + 1), 'the hash tag is never empty').not.toBe('}');
      }),
      { numRuns: 2_000 },
    );
  });

  it('gives distinct keys distinct names (the escape is injective)', () => {
    fc.assert(
      fc.property(anyPrefix, tricky, tricky, (prefix, a, b) => {
        expect(redisKeyName(prefix, a) === redisKeyName(prefix, b)).toBe(a === b);
      }),
      { numRuns: 5_000 },
    );
    const lookalikes = ['', '%', '%25', '}', '%7D', '%257D', '}}', '%7D%7D', '%%'];
    expect(new Set(lookalikes.map((key) => redisKeyName('p:', key))).size).toBe(lookalikes.length);
  });

  it('keeps the stored form of a key without % or } (no move on upgrade)', () => {
    fc.assert(
      fc.property(
        anyPrefix,
        anyKey.filter((key) => key.length > 0 && !/[%}]/.test(key)),
        (prefix, key) => {
          expect(redisKeyName(prefix, key)).toBe(`${prefix}{${key}}`);
        },
      ),
    );
    expect(redisKeyName('p:', '}x')).toBe('p:{%7Dx}');
    expect(redisKeyName('p:', '50%')).toBe('p:{50%25}');
    expect(redisKeyName('p:', '')).toBe('p:{%}');
  });

  it('refuses a prefix with a brace, naming the option', () => {
    for (const prefix of ['{', '}', 'a{b', 'a}b', '{}', '{tag}:']) {
      expect(() => checkPrefix(prefix), prefix).toThrow(ConfigError);
      expect(() => checkPrefix(prefix), prefix).toThrow(/^prefix /);
    }
    expect(() => checkPrefix(7)).toThrow(/^prefix must be a string/);
    expect(checkPrefix('app:%:')).toBe('app:%:');
  });
});

describe('a prefix that would move the hash tag', () => {
  const BAD = ['{}', 'a{', '}a', '{tenant}:'];

  it.each(BAD)('%j is a ConfigError naming prefix for every Redis store', (prefix) => {
    const algorithm = gcra({ limit: 1, periodMs: 1_000 });
    const client = redis();
    for (const make of [
      () => createRedisLimiter({ client, algorithm, prefix }),
      () => redisHolds({ client, prefix }),
      () => createRedisPauseStore({ client, prefix }),
      () => createHeartbeat({ client, prefix }),
    ]) {
      expect(make).toThrow(ConfigError);
      expect(make).toThrow(/^prefix must not contain/);
    }
  });
});

describe('hash tags on a single node', () => {
  const limiter = (prefix: string) =>
    createRedisLimiter({
      client: redis(),
      algorithm: gcra({ limit: 2, periodMs: 60_000 }),
      prefix,
      clock: () => 1_700_000_000_000,
      onWarning: false,
    });

  it('keeps keys an escape could merge apart: blocks, state and stored names', async () => {
    const prefix = `single${++prefixes}:`;
    const store = limiter(prefix);
    const keys = ['}', '%7D', '%', '%25', '}x', '%7Dx', 'user:42'];
    await store.block?.('}', 60_000);
    await store.block?.('%25', 60_000);
    for (const key of keys) {
      const blocked = key === '}' || key === '%25';
      expect((await store.limit(key, { cost: 2 })).reason, key).toBe(blocked ? 'blocked' : undefined);
    }
    expect((await store.limit('%7D')).allowed, 'its own state, spent').toBe(false);
    const names = keys.map((key) => redisKeyName(prefix, key));
    expect(new Set(names).size).toBe(keys.length);
    const blocks = ['}', '%25'].map((key) => redisKeyName(prefix, key) + BLOCK_SUFFIX);
    const spent = keys.filter((key) => key !== '}' && key !== '%25').map((key) => redisKeyName(prefix, key));
    expect((await admin().keys(`${prefix}*`)).sort()).toEqual([...blocks, ...spent].sort());
    expect(spent).toContain(`${prefix}{user:42}`);
  });

  it('still refuses the empty key before any I/O', async () => {
    await expect(limiter(`single${++prefixes}:`).limit('')).rejects.toBeInstanceOf(InvalidKeyError);
  });

  it('stores a heartbeat under its escaped name', async () => {
    const prefix = `beat${++prefixes}:`;
    const heartbeat = createHeartbeat({ client: redis(), prefix, name: '}fleet' });
    expect(await heartbeat.beat()).toBe(1);
    expect(await admin().zcard(redisKeyName(prefix, '}fleet'))).toBe(1);
    await heartbeat.close();
  });
});

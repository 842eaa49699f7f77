import type { Redis } from 'ioredis';

/*
 * A decision script decides a call of one key with one committed cost before its general path,
 * and falls through to it for what that path alone handles. The one-key tests decide the same
 * state twice: alone (the one-key path, or its fall-through) and as the first key of a two-key
 * call (always the general path), and expect the same reply and the same state after.
 * Equivalence, not speed: that is measured (callgrind, the bench), never asserted in a test.
 */

/** Plants a key's state before the call. */
export type Setup = (key: string) => Promise<unknown>;

/** What one decision left: its reply, and the key's type, value and whether it has a TTL. */
export interface Outcome {
  readonly reply: unknown[];
  readonly type: string;
  readonly value: unknown;
  readonly owned: boolean;
}

let keys = 0;

/**
 * Decides `cost` (a cost argument: `costArg`'s) for a new key planted by `setup`, by `source`
 * with `args` (the clock, then the parameters): alone, or first in a call with another key.
 */
export async function decideAfter(
  redis: Redis,
  source: string,
  args: readonly number[],
  setup: Setup,
  cost: number,
  alone: boolean,
): Promise<Outcome> {
  const key = `one{${++keys}}`;
  await setup(key);
  const keysOfCall = alone ? [key] : [key, `${key}:other`];
  const costs = alone ? [cost] : [cost, 0];
  const reply = (await redis.eval(source, keysOfCall.length, ...keysOfCall, ...args, ...costs)) as unknown[];
  const type = await redis.type(key);
  const value = type === 'string' ? await redis.get(key) : type === 'hash' ? await redis.hgetall(key) : null;
  return { reply: reply.slice(0, 4), type, value, owned: (await redis.pttl(key)) > 0 };
}
